# mutant: one uniform per row serves every position, so the acceptances of a row are correlated
"""Speculative decoding, the verification step: accept a prefix of the draft, add one token.

A draft model proposed K tokens, each sampled from its distribution q_i. The target model
scored every position at once and gave p_i for i = 0..K (one more than the draft). Draft
token x_i is kept with probability min(1, p_i(x_i) / q_i(x_i)); at the first rejection the
row emits a token from the residual norm(max(0, p_i - q_i)) and stops; a row that keeps all
K tokens emits a bonus token from p_K. Every emitted token is then distributed exactly as if
the target had sampled it.
"""

import torch


def verify(
    draft_tokens: torch.Tensor,
    q: torch.Tensor,
    p: torch.Tensor,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """tokens int64 [B, K+1] padded with -1, lengths int64 [B] in 1..K+1."""
    b, k = draft_tokens.shape
    device = p.device
    index = draft_tokens.unsqueeze(-1)
    p_x = p[:, :k].gather(-1, index).squeeze(-1)
    q_x = q.gather(-1, index).squeeze(-1)
    u = torch.rand((b, 1), generator=generator, device=device, dtype=p.dtype).expand(b, k)
    accept = u * q_x < p_x  # u < p/q without dividing; q = 0 keeps a token iff p > 0
    n = accept.to(torch.int64).cumprod(-1).sum(-1)  # accepted prefix length

    residual = (p[:, :k] - q).clamp_min(0)
    mass = residual.sum(-1, keepdim=True)
    residual = torch.where(mass > 0, residual / mass.clamp_min(1e-30), p[:, :k])
    dists = torch.cat([residual, p[:, k:]], dim=1)  # [B, K+1, V]
    rows = torch.arange(b, device=device)
    extra = torch.multinomial(dists[rows, n], 1, generator=generator).squeeze(1)

    positions = torch.arange(k + 1, device=device)
    padded = torch.cat([draft_tokens.to(torch.int64), torch.full_like(n[:, None], -1)], dim=1)
    tokens = torch.where(positions < n[:, None], padded, torch.full_like(padded, -1))
    tokens = torch.where(positions == n[:, None], extra[:, None], tokens)
    return tokens, n + 1


def verify_greedy(draft_tokens: torch.Tensor, p: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Temperature 0: keep x_i while it is argmax p_i; then emit argmax p at the stop."""
    _, k = draft_tokens.shape
    device = p.device
    best = p.argmax(-1)  # [B, K+1], the first maximum
    n = (draft_tokens == best[:, :k]).to(torch.int64).cumprod(-1).sum(-1)
    extra = best.gather(1, n[:, None])
    positions = torch.arange(k + 1, device=device)
    padded = torch.cat([draft_tokens.to(torch.int64), torch.full_like(n[:, None], -1)], dim=1)
    tokens = torch.where(positions < n[:, None], padded, torch.full_like(padded, -1))
    tokens = torch.where(positions == n[:, None], extra, tokens)
    return tokens, n + 1
