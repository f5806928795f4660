"""The grader's own GPTQ, written independently of the exercise's solution file.

It follows the Optimal Brain Quantization form of the update (GPTQ paper, eqs. 2-4) instead
of the Cholesky form: keep the inverse Hessian of the columns not yet quantized; fix column
i to its grid value, move the remaining weights by -(w_i - q_i) / [H_F^-1]_ii * [H_F^-1]_i,:
and remove column i from H_F^-1 with one step of Gaussian elimination. No blocks, no lazy
batching. This is mathematically the same as the Cholesky/lazy-batch algorithm (row i of
the upper Cholesky factor of H^-1 is [H_F^-1]_i,: / sqrt([H_F^-1]_ii)), so the two agree up
to floating-point rounding.

Also here: the quantization grid and round-to-nearest (RTN), used as a baseline.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


def grid(w: torch.Tensor, bits: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row asymmetric min-max grid over w [rows, cols] -> (scale, zero) as [rows, 1]."""
    maxq = float(2**bits - 1)
    lo = w.amin(dim=1).clamp(max=0.0)
    hi = w.amax(dim=1).clamp(min=0.0)
    flat = (lo == 0) & (hi == 0)
    lo = torch.where(flat, torch.full_like(lo, -1.0), lo)
    hi = torch.where(flat, torch.full_like(hi, 1.0), hi)
    scale = (hi - lo) / maxq
    zero = torch.round(-lo / scale)
    return scale[:, None], zero[:, None]


def to_grid(w: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor, bits: int) -> torch.Tensor:
    levels = torch.clamp(torch.round(w / scale) + zero, 0, 2**bits - 1)
    return (levels - zero) * scale


def rtn(W: torch.Tensor, bits: int, group_size: int) -> torch.Tensor:
    """Round-to-nearest with the same grids (each group's grid from the original W)."""
    cols = W.shape[1]
    size = cols if group_size == -1 else group_size
    Q = torch.empty_like(W)
    for g0 in range(0, cols, size):
        block = W[:, g0 : g0 + size]
        scale, zero = grid(block, bits)
        Q[:, g0 : g0 + size] = to_grid(block, scale, zero, bits)
    return Q


@dataclass(frozen=True)
class Prepared:
    """W and H after the dead-input fix, permutation and damping (what gets factorised)."""

    W: torch.Tensor  # dead columns zeroed, in processing order
    H: torch.Tensor  # dead diagonal set to 1, permuted, damped
    perm: torch.Tensor  # processing order -> original column
    damp: float


def prepare(W: torch.Tensor, H: torch.Tensor, percdamp: float, act_order: bool) -> Prepared:
    W = W.clone()
    H = H.clone()
    dead = torch.diagonal(H) == 0
    idx = torch.nonzero(dead).flatten()
    H[idx, idx] = 1.0
    W[:, idx] = 0.0
    cols = W.shape[1]
    if act_order:
        perm = torch.sort(torch.diagonal(H), descending=True, stable=True).indices
    else:
        perm = torch.arange(cols, device=W.device)
    W = W.index_select(1, perm)
    H = H.index_select(0, perm).index_select(1, perm)
    damp = percdamp * float(torch.diagonal(H).mean())
    H = H + damp * torch.eye(cols, dtype=H.dtype, device=H.device)
    return Prepared(W, H, perm, damp)


def gptq_reference(
    W: torch.Tensor,
    H: torch.Tensor,
    bits: int = 4,
    group_size: int = 128,
    percdamp: float = 0.01,
    act_order: bool = False,
) -> tuple[torch.Tensor, float]:
    """(Q, loss) like gptq_quantize; computes in W's dtype (float32 or float64)."""
    p = prepare(W, H, percdamp, act_order)
    work = p.W.clone()
    cols = work.shape[1]
    size = cols if group_size == -1 else group_size
    # Hinv[i:, i:] is the inverse Hessian of the columns still free when column i is fixed
    Hinv = torch.linalg.inv(p.H)
    Q = torch.zeros_like(work)
    losses = torch.zeros(cols, dtype=work.dtype, device=work.device)
    scale = zero = None
    for i in range(cols):
        if i % size == 0:
            scale, zero = grid(work[:, i : i + size], bits)
        w = work[:, i]
        q = to_grid(w[:, None], scale, zero, bits)[:, 0]
        Q[:, i] = q
        d = Hinv[i, i]
        losses[i] = ((w - q) ** 2).sum() / d / 2
        rest = Hinv[i, i + 1 :]
        work[:, i + 1 :].addr_((w - q) / d, rest, alpha=-1.0)
        Hinv[i + 1 :, i + 1 :].addr_(Hinv[i + 1 :, i] / d, rest, alpha=-1.0)
    loss = float(losses.sum())
    out = torch.empty_like(Q)
    out[:, p.perm] = Q
    return out, loss


def output_error(W: torch.Tensor, Q: torch.Tensor, X: torch.Tensor) -> float:
    """||(W - Q) X||^2 / ||W X||^2 in float64."""
    W64, Q64, X64 = W.double(), Q.double(), X.double()
    return float(((W64 - Q64) @ X64).pow(2).sum() / (W64 @ X64).pow(2).sum())
