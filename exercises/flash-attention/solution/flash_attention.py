"""flash-attention: the tiled forward pass (online softmax) and its tiled backward pass.

Reference solution in the FlashAttention-2 order: query tiles outside, key/value tiles
inside for the forward; key/value tiles outside, query tiles inside for the backward.
"""

import math

import torch


def _visible(rows: torch.Tensor, cols: torch.Tensor, offset: int) -> torch.Tensor:
    """Bottom-right causal mask of one tile: query i sees key j when j <= i + offset."""
    return cols[None, :] <= rows[:, None] + offset


def _check(q: torch.Tensor, k: torch.Tensor, causal: bool) -> None:
    nq, nk = q.shape[-2], k.shape[-2]
    if causal and nq > nk:
        raise ValueError(
            f"causal attention needs Nq <= Nk (got Nq = {nq}, Nk = {nk}): "
            "the first Nq - Nk queries would see no key"
        )


def flash_attention_forward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    block_q: int = 64,
    block_k: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(d)) v, one block_q x block_k score tile at a time.

    q [B, H, Nq, d], k and v [B, H, Nk, d]. Returns o [B, H, Nq, d] and the natural-log
    log-sum-exp of each row of scaled scores, lse [B, H, Nq].
    """
    _check(q, k, causal)
    nq, nk, d = q.shape[-2], k.shape[-2], q.shape[-1]
    scale = 1.0 / math.sqrt(d)
    offset = nk - nq
    o = torch.empty_like(q)
    lse = torch.empty(q.shape[:-1], dtype=q.dtype, device=q.device)
    for i in range(0, nq, block_q):
        qi = q[..., i : i + block_q, :]
        rows = torch.arange(i, i + qi.shape[-2], device=q.device)
        m = torch.full(qi.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)
        row_sum = torch.zeros_like(m)
        acc = torch.zeros_like(qi)
        # with causal, keys after the last visible one of this tile are skipped entirely
        stop = min(nk, i + qi.shape[-2] + offset) if causal else nk
        for j in range(0, stop, block_k):
            kj, vj = k[..., j : j + block_k, :], v[..., j : j + block_k, :]
            s = (qi @ kj.transpose(-1, -2)) * scale
            if causal:
                cols = torch.arange(j, j + kj.shape[-2], device=q.device)
                s = s.masked_fill(~_visible(rows, cols, offset), float("-inf"))
            m_new = torch.maximum(m, s.amax(dim=-1))
            p = torch.exp(s - m_new[..., None])
            alpha = torch.exp(m - m_new)  # 0 on the first tile, where m = -inf
            row_sum = row_sum * alpha + p.sum(dim=-1)
            acc = acc * alpha[..., None] + p @ vj
            m = m_new
        o[..., i : i + block_q, :] = acc / row_sum[..., None]
        lse[..., i : i + block_q] = m + torch.log(row_sum)
    return o, lse


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
    """Gradients of o = flash_attention_forward(q, k, v, causal)[0] for the upstream do.

    P is rebuilt tile by tile as exp(S - lse); D = rowsum(do * o) replaces rowsum(dP * P).
    """
    _check(q, k, causal)
    nq, nk, d = q.shape[-2], k.shape[-2], q.shape[-1]
    scale = 1.0 / math.sqrt(d)
    offset = nk - nq
    delta = (do * o).sum(dim=-1)  # D_i, [B, H, Nq]
    dq = torch.zeros_like(q)
    dk = torch.zeros_like(k)
    dv = torch.zeros_like(v)
    for j in range(0, nk, block_k):
        kj, vj = k[..., j : j + block_k, :], v[..., j : j + block_k, :]
        cols = torch.arange(j, j + kj.shape[-2], device=q.device)
        dkj = torch.zeros_like(kj)
        dvj = torch.zeros_like(vj)
        # with causal, query rows before the first one that sees key j are skipped
        start = max(0, j - offset) // block_q * block_q if causal else 0
        for i in range(start, nq, block_q):
            qi, doi = q[..., i : i + block_q, :], do[..., i : i + block_q, :]
            s = (qi @ kj.transpose(-1, -2)) * scale
            if causal:
                rows = torch.arange(i, i + qi.shape[-2], device=q.device)
                s = s.masked_fill(~_visible(rows, cols, offset), float("-inf"))
            p = torch.exp(s - lse[..., i : i + block_q, None])
            dvj = dvj + p.transpose(-1, -2) @ doi
            dp = doi @ vj.transpose(-1, -2)
            ds = p * (dp - delta[..., i : i + block_q, None])
            dkj = dkj + (ds.transpose(-1, -2) @ qi) * scale
            dq[..., i : i + block_q, :] += (ds @ kj) * scale
        dk[..., j : j + block_k, :] = dkj
        dv[..., j : j + block_k, :] = dvj
    return dq, dk, dv
