# mutant: materialises the full Nq x Nk score matrix instead of tiling
"""flash-attention mutant: full_nxn."""

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
    _check(q, k, causal)
    nq, nk, d = q.shape[-2], k.shape[-2], q.shape[-1]
    s = (q @ k.transpose(-1, -2)) / math.sqrt(d)
    if causal:
        rows = torch.arange(nq, device=q.device)
        cols = torch.arange(nk, device=q.device)
        s = s.masked_fill(~_visible(rows, cols, nk - nq), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    o = torch.exp(s - lse[..., None]) @ v
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
