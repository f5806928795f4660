"""Float64 attention with the full score matrix (the grader may materialise it; you may not),
and the known mistakes, each computed the way a candidate's code would compute it."""

from __future__ import annotations

import math

import torch


def visible(nq: int, nk: int, align: str = "bottom-right", device: str = "cpu") -> torch.Tensor:
    """[nq, nk] bool: query i sees key j (bottom-right: j <= i + nk - nq; top-left: j <= i)."""
    offset = nk - nq if align == "bottom-right" else 0
    rows = torch.arange(nq, device=device)[:, None]
    cols = torch.arange(nk, device=device)[None, :]
    return cols <= rows + offset


def scores(
    q: torch.Tensor,
    k: torch.Tensor,
    causal: bool,
    align: str = "bottom-right",
    scale: float | None = None,
    keys: int | None = None,
    hide: torch.Tensor | None = None,
) -> torch.Tensor:
    """Scaled, masked scores [B, H, Nq, Nk]; ``keys`` keeps only the first ``keys`` keys and
    ``hide`` ([Nq, Nk] bool) masks more."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = (q @ k.transpose(-1, -2)) * scale
    nq, nk = s.shape[-2:]
    keep = torch.ones(nq, nk, dtype=torch.bool, device=q.device)
    if causal:
        keep &= visible(nq, nk, align, str(q.device))
    if keys is not None:
        keep[:, keys:] = False
    if hide is not None:
        keep &= ~hide.to(q.device)
    return s.masked_fill(~keep, float("-inf"))


def skipped_off_by_one(nq: int, nk: int, block_q: int, block_k: int) -> torch.Tensor:
    """[nq, nk] bool: what a causal tile skip that is off by one loses. A key tile must be
    skipped when its first key j0 > i_last + Nk - Nq (i_last: the query tile's last row); a
    skip at j0 >= i_last + Nk - Nq also drops the tile starting at that key, which row i_last
    sees (the first key tile is never skipped)."""
    hide = torch.zeros(nq, nk, dtype=torch.bool)
    for i in range(0, nq, block_q):
        last = min(i + block_q, nq) - 1
        j0 = last + nk - nq
        if 0 < j0 < nk and j0 % block_k == 0:
            hide[last, j0] = True
    return hide


def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, **knobs: object
) -> tuple[torch.Tensor, torch.Tensor]:
    """(o, lse) in the inputs' dtype from the full score matrix."""
    s = scores(q, k, causal, **knobs)  # type: ignore[arg-type]
    lse = torch.logsumexp(s, dim=-1)
    return torch.softmax(s, dim=-1) @ v, lse


def row_max(q: torch.Tensor, k: torch.Tensor, causal: bool) -> torch.Tensor:
    return scores(q, k, causal).amax(dim=-1)


def tiled_without_rescale(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool,
    block_k: int,
    rescale_sum: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The online softmax with the accumulator never rescaled when the max grows (and the
    running sum rescaled only when ``rescale_sum``), key tiles in ascending order."""
    s = scores(q, k, causal)
    m = torch.full(s.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)
    row_sum = torch.zeros_like(m)
    acc = torch.zeros_like(q)
    for j in range(0, k.shape[-2], block_k):
        sj = s[..., j : j + block_k]
        m_new = torch.maximum(m, sj.amax(dim=-1))
        p = torch.exp(sj - m_new[..., None]).nan_to_num(0.0)
        alpha = torch.exp(m - m_new).nan_to_num(1.0) if rescale_sum else 1.0
        row_sum = row_sum * alpha + p.sum(dim=-1)
        acc = acc + p @ v[..., j : j + block_k, :]
        m = m_new
    return acc / row_sum[..., None], m + torch.log(row_sum)


def gradients(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, do: torch.Tensor, causal: bool
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dq, dk, dv) by autograd through :func:`attention`."""
    leaves = [x.detach().clone().requires_grad_(True) for x in (q, k, v)]
    with torch.enable_grad():
        o, _ = attention(*leaves, causal)
        dq, dk, dv = torch.autograd.grad((o * do).sum(), leaves)  # a scalar: no grad_outputs
    return dq, dk, dv


def gradients_by_formula(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    o: torch.Tensor,
    lse: torch.Tensor,
    do: torch.Tensor,
    causal: bool,
    align: str = "bottom-right",
    with_delta: bool = True,
    scale_grads: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The backward equations on the full matrices, with optional mistakes."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    p = torch.exp(scores(q, k, causal, align) - lse[..., None])
    dv = p.transpose(-1, -2) @ do
    dp = do @ v.transpose(-1, -2)
    delta = (do * o).sum(dim=-1, keepdim=True) if with_delta else 0.0
    ds = p * (dp - delta)
    factor = scale if scale_grads else 1.0
    return (ds @ k) * factor, (ds.transpose(-1, -2) @ q) * factor, dv
