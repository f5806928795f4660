# alternative: FlashAttention-1 order per (b, h) with 2-D tiles, K/V outer, output kept normalised
"""flash-attention, the loop order of the first FlashAttention paper (Algorithm 1).

The statistics (m, l) of every query row live across the outer loop over K/V tiles, and the
output is kept normalised: each visit rescales it by l_old * exp(m_old - m_new) / l_new.
"""

import math

import torch


def _keep(r0: int, nr: int, c0: int, nc: int, offset: int, device: torch.device) -> torch.Tensor:
    rows = torch.arange(r0, r0 + nr, device=device)[:, None]
    cols = torch.arange(c0, c0 + nc, device=device)[None, :]
    return cols - rows <= offset


def flash_attention_forward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    block_q: int = 64,
    block_k: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    nq, nk, d = q.shape[-2], k.shape[-2], q.shape[-1]
    if causal and nq > nk:
        raise ValueError(f"causal needs Nq <= Nk, got Nq = {nq} > Nk = {nk}")
    scale = d**-0.5
    offset = nk - nq
    out = torch.zeros_like(q)
    lse = torch.zeros(q.shape[:-1], dtype=q.dtype, device=q.device)
    for b in range(q.shape[0]):
        for h in range(q.shape[1]):
            qs, ks, vs = q[b, h], k[b, h], v[b, h]
            o = torch.zeros_like(qs)
            m = torch.full((nq,), -math.inf, dtype=q.dtype, device=q.device)
            ell = torch.zeros_like(m)
            for c0 in range(0, nk, block_k):
                kt, vt = ks[c0 : c0 + block_k], vs[c0 : c0 + block_k]
                for r0 in range(0, nq, block_q):
                    qt = qs[r0 : r0 + block_q]
                    if causal and c0 > r0 + len(qt) - 1 + offset:
                        continue  # no row of this query tile sees a key of this tile yet
                    s = scale * (qt @ kt.T)
                    if causal:
                        s = torch.where(
                            _keep(r0, len(qt), c0, len(kt), offset, q.device), s, -math.inf
                        )
                    tile_max = s.max(dim=1).values
                    tile_max = torch.where(torch.isfinite(tile_max), tile_max, 0.0)
                    pt = torch.exp(s - tile_max[:, None])
                    rows = slice(r0, r0 + len(qt))
                    m_old, l_old = m[rows], ell[rows]
                    m_new = torch.maximum(m_old, tile_max)
                    a_old = l_old * torch.exp(m_old - m_new)
                    a_new = torch.exp(tile_max - m_new)
                    l_new = a_old + a_new * pt.sum(dim=1)
                    o[rows] = (a_old[:, None] * o[rows] + a_new[:, None] * (pt @ vt)) / l_new[
                        :, None
                    ]
                    m[rows], ell[rows] = m_new, l_new
            out[b, h] = o
            lse[b, h] = m + torch.log(ell)
    return out, lse


def flash_attention_backward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    o: torch.Tensor,
    lse: torch.Tensor,
    do: torch.Tensor,
    causal: bool = False,
    block_q: int = 64,
    block_k: int = 64,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    nq, nk, d = q.shape[-2], k.shape[-2], q.shape[-1]
    if causal and nq > nk:
        raise ValueError(f"causal needs Nq <= Nk, got Nq = {nq} > Nk = {nk}")
    scale = d**-0.5
    offset = nk - nq
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    for b in range(q.shape[0]):
        for h in range(q.shape[1]):
            for r0 in range(0, nq, block_q):
                qt, dot = q[b, h, r0 : r0 + block_q], do[b, h, r0 : r0 + block_q]
                lse_t = lse[b, h, r0 : r0 + block_q]
                dsum = (dot * o[b, h, r0 : r0 + block_q]).sum(dim=1)  # D_i of this tile
                dqt = torch.zeros_like(qt)
                for c0 in range(0, nk, block_k):
                    if causal and c0 > r0 + len(qt) - 1 + offset:
                        break
                    kt, vt = k[b, h, c0 : c0 + block_k], v[b, h, c0 : c0 + block_k]
                    s = scale * (qt @ kt.T)
                    if causal:
                        s = torch.where(
                            _keep(r0, len(qt), c0, len(kt), offset, q.device), s, -math.inf
                        )
                    pt = torch.exp(s - lse_t[:, None])
                    dv[b, h, c0 : c0 + block_k] += pt.T @ dot
                    ds = pt * (dot @ vt.T - dsum[:, None])
                    dqt += scale * (ds @ kt)
                    dk[b, h, c0 : c0 + block_k] += scale * (ds.T @ qt)
                dq[b, h, r0 : r0 + block_q] = dqt
    return dq, dk, dv
