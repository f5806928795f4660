# alternative: the extra token drawn by an exponential race (argmin of Exp(1) / weight, from
# generator uniforms), which needs no normalised residual; acceptance by an explicit ratio
# with q = 0 handled, in a loop over positions with an alive mask
"""Correct: acceptance by u < p/q (with the q = 0 case handled), and the extra token drawn by
an exponential race (argmin E_j / w_j, E_j ~ Exp(1) from generator uniforms), which needs no
normalisation of the residual. Vectorised over the batch with a running 'alive' mask."""

import torch


def _race(w, generator):
    # w: [B, V] non-negative weights (each row has a positive entry)
    u = torch.rand(w.shape, generator=generator, device=w.device, dtype=torch.float64)
    e = -torch.log1p(-u)  # Exp(1), u in [0, 1)
    wd = w.double()
    key = torch.where(
        wd > 0, e / torch.where(wd > 0, wd, torch.ones_like(wd)), torch.full_like(wd, float("inf"))
    )
    return key.argmin(-1)


def verify(draft_tokens, q, p, generator=None):
    B, K = draft_tokens.shape
    dev = p.device
    d = draft_tokens.to(dev)
    q = q.to(dev)
    alive = torch.ones(B, dtype=torch.bool, device=dev)
    n = torch.full((B,), K, dtype=torch.int64, device=dev)
    u_all = torch.rand((K, B), generator=generator, device=dev, dtype=torch.float64)
    for i in range(K):
        x = d[:, i : i + 1]
        px = p[:, i].gather(1, x).squeeze(1).double()
        qx = q[:, i].gather(1, x).squeeze(1).double()
        ratio = torch.where(
            qx > 0,
            px / torch.where(qx > 0, qx, torch.ones_like(qx)),
            torch.where(px > 0, torch.full_like(px, float("inf")), torch.zeros_like(px)),
        )
        keep = u_all[i] < ratio
        newly = alive & ~keep
        n = torch.where(newly, torch.full_like(n, i), n)
        alive = alive & keep
    # weights for every row at its stop position
    idx = torch.arange(B, device=dev)
    ni = n.clamp(max=K - 1)
    pi, qi = p[idx, ni], q[idx, ni]
    res = (pi - qi).clamp(min=0)
    res = torch.where(res.sum(-1, keepdim=True) > 0, res, pi)
    w = torch.where((n == K)[:, None], p[:, K], res)
    extra = _race(w, generator)
    tokens = torch.full((B, K + 1), -1, dtype=torch.int64, device=dev)
    cols = torch.arange(K + 1, device=dev)[None]
    dpad = torch.cat((d, torch.zeros((B, 1), dtype=torch.int64, device=dev)), 1)
    tokens = torch.where(cols < n[:, None], dpad, tokens)
    tokens = torch.where(cols == n[:, None], extra[:, None], tokens)
    return tokens, n + 1


def verify_greedy(draft_tokens, p):
    B, K = draft_tokens.shape
    dev = p.device
    d = draft_tokens.to(dev)
    V = p.shape[-1]
    m = p.max(-1, keepdim=True).values
    ids = torch.arange(V, device=dev).expand_as(p)
    best = torch.where(p == m, ids, torch.full_like(ids, V)).min(-1).values  # lowest id among ties
    match = d == best[:, :K]
    miss = torch.cat((~match, torch.ones((B, 1), dtype=torch.bool, device=dev)), 1)
    n = miss.long().argmax(-1)  # first mismatch (or K)
    tokens = torch.full((B, K + 1), -1, dtype=torch.int64, device=dev)
    cols = torch.arange(K + 1, device=dev)[None]
    dpad = torch.cat((d, torch.zeros((B, 1), dtype=torch.int64, device=dev)), 1)
    tokens = torch.where(cols < n[:, None], dpad, tokens)
    tokens = torch.where(cols == n[:, None], best.gather(1, n[:, None]), tokens)
    return tokens, n + 1
