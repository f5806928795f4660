# alternative: the first rejection found with argmax over a padded rejection mask, and every
# row's extra token drawn by inverse CDF from one uniform (searchsorted on the cumulative sum)
"""Speculative verification with masks and inverse-CDF sampling."""

import torch


def _pick(dists: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """One token per row of dists [B, V] (nonnegative, any positive mass) from u [B]."""
    cdf = dists.cumsum(-1)
    target = u[:, None] * cdf[:, -1:]
    token = torch.searchsorted(cdf, target, right=True).squeeze(1)
    token = token.clamp_max(dists.shape[-1] - 1)
    # a token with zero mass can only be hit at a plateau edge: step to the next positive one
    positive = dists > 0
    index = torch.arange(dists.shape[-1], device=dists.device)
    later = positive & (index[None, :] >= token[:, None])
    return torch.where(
        later.any(-1), later.to(torch.int8).argmax(-1), positive.to(torch.int8).argmax(-1)
    )


def verify(draft_tokens, q, p, generator=None):
    b, k = draft_tokens.shape
    device = p.device
    p_draft = p[:, :k]
    p_x = torch.gather(p_draft, 2, draft_tokens[..., None])[..., 0]
    q_x = torch.gather(q, 2, draft_tokens[..., None])[..., 0]
    ratio = torch.where(q_x > 0, p_x / q_x.clamp_min(1e-300), (p_x > 0).to(p.dtype))
    u = torch.rand((b, k + 1), generator=generator, device=device, dtype=torch.float64)
    rejected = u[:, :k] >= ratio.clamp_max(1).double()
    rejected = torch.cat([rejected, torch.ones_like(rejected[:, :1])], dim=1)
    n = rejected.to(torch.int8).argmax(-1)  # first True; position K is always True
    rows = torch.arange(b, device=device)
    at = n.clamp_max(k - 1)
    residual = (p_draft[rows, at] - q[rows, at]).clamp_min(0)
    residual = torch.where(residual.sum(-1, keepdim=True) > 0, residual, p_draft[rows, at])
    dist = torch.where((n < k)[:, None], residual, p[:, k])
    extra = _pick(dist.double(), u[:, k])
    tokens = torch.full((b, k + 1), -1, dtype=torch.int64, device=device)
    keep = torch.arange(k, device=device)[None, :] < n[:, None]
    tokens[:, :k] = torch.where(keep, draft_tokens, tokens[:, :k])
    tokens[rows, n] = extra
    return tokens, (n + 1).to(torch.int64)


def verify_greedy(draft_tokens, p):
    b, k = draft_tokens.shape
    best = p.argmax(-1)
    miss = torch.cat(
        [draft_tokens != best[:, :k], torch.ones_like(best[:, :1], dtype=torch.bool)], 1
    )
    n = miss.to(torch.int8).argmax(-1)
    rows = torch.arange(b, device=p.device)
    tokens = torch.full((b, k + 1), -1, dtype=torch.int64, device=p.device)
    keep = torch.arange(k, device=p.device)[None, :] < n[:, None]
    tokens[:, :k] = torch.where(keep, draft_tokens, tokens[:, :k])
    tokens[rows, n] = best[rows, n]
    return tokens, (n + 1).to(torch.int64)
