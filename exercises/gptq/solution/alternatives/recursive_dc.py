# alternative: recursive divide and conquer over blocks
"""gptq: quantize one linear layer with GPTQ (Frantar et al., 2022, arXiv:2210.17323).

Grade with:  quizzer exercise gptq --check
The grid helpers below are given; write gptq_quantize.
"""

import torch


def quantize_params(w: torch.Tensor, bits: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Asymmetric min-max grid per row of w [rows, cols]: (scale, zero), each [rows, 1].

    The range always contains 0; an all-zero row gets the range [-1, 1].
    """
    maxq = 2**bits - 1
    zeros = torch.zeros(w.shape[0], device=w.device, dtype=w.dtype)
    xmin = torch.minimum(w.min(dim=1).values, zeros)
    xmax = torch.maximum(w.max(dim=1).values, zeros)
    empty = (xmin == 0) & (xmax == 0)
    xmin[empty] = -1.0
    xmax[empty] = 1.0
    scale = (xmax - xmin) / maxq
    zero = torch.round(-xmin / scale)
    return scale.unsqueeze(1), zero.unsqueeze(1)


def quantize(w: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor, bits: int) -> torch.Tensor:
    """Round w to the grid scale * (k - zero), k = 0 .. 2^bits - 1 (returns dequantized)."""
    q = torch.clamp(torch.round(w / scale) + zero, 0, 2**bits - 1)
    return scale * (q - zero)


def gptq_quantize(
    W: torch.Tensor,
    H: torch.Tensor,
    bits: int = 4,
    group_size: int = 128,
    block_size: int = 128,
    percdamp: float = 0.01,
    act_order: bool = False,
) -> tuple[torch.Tensor, float]:
    """Recursive divide-and-conquer GPTQ.

    solve(lo, hi) needs W[:, lo:hi] up to date; it quantizes the left half, applies the left
    half's errors to the right half with one matrix product, then does the right half.
    Leaves are the blocks of block_size columns.  A group's grid is taken from the group's
    current weights W0 - Err[:, :j] @ U[:j, group] (all earlier columns applied).
    """
    dev = W.device
    dtype = torch.float64 if W.dtype == torch.float64 else torch.float32
    W0 = W.detach().to(device=dev, dtype=dtype).clone()
    Hd = H.detach().to(device=dev, dtype=dtype).clone()
    ncol = W0.shape[1]

    idx = torch.arange(ncol, device=dev)
    d = Hd[idx, idx]
    dead = d == 0
    Hd[idx, idx] = torch.where(dead, torch.ones_like(d), d)
    W0 = W0 * (~dead).to(dtype)  # zero the dead columns

    inv = None
    if act_order:
        perm = torch.argsort(Hd[idx, idx], descending=True, stable=True)
        W0 = W0.index_select(1, perm)
        Hd = Hd.index_select(0, perm).index_select(1, perm)
        inv = torch.empty_like(perm)
        inv[perm] = idx

    Hd[idx, idx] += percdamp * Hd[idx, idx].mean()
    try:
        L = torch.linalg.cholesky(Hd)
        Hinv = torch.cholesky_inverse(L)
        U = torch.linalg.cholesky(Hinv, upper=True)
    except RuntimeError as exc:  # torch.linalg.LinAlgError
        raise ValueError(
            "H is not positive definite: Cholesky factorisation failed; increase percdamp"
        ) from exc

    gs = ncol if group_size == -1 else group_size
    Wk = W0.clone()  # working copy, updated hierarchically
    Q = torch.empty_like(W0)
    Err = torch.zeros_like(W0)
    grid = {}

    def leaf(lo, hi):
        Wb = Wk[:, lo:hi].clone()
        for j in range(lo, hi):
            if j % gs == 0:
                g1 = min(j + gs, ncol)
                cur = W0[:, j:g1] - Err[:, :j] @ U[:j, j:g1]
                grid["s"], grid["z"] = quantize_params(cur, bits)
            w = Wb[:, j - lo]
            q = quantize(w[:, None], grid["s"], grid["z"], bits)[:, 0]
            e = (w - q) / U[j, j]
            Q[:, j] = q
            Err[:, j] = e
            Wb[:, j - lo :] -= torch.outer(e, U[j, j:hi])

    def solve(lo, hi):
        nblk = -(-(hi - lo) // block_size)
        if nblk <= 1:
            leaf(lo, hi)
            return
        mid = lo + (nblk // 2) * block_size
        solve(lo, mid)
        Wk[:, mid:hi] -= Err[:, lo:mid] @ U[lo:mid, mid:hi]
        solve(mid, hi)

    if ncol:
        solve(0, ncol)
    loss = float(Err.pow(2).sum() * 0.5)
    if inv is not None:
        Q = Q.index_select(1, inv)
    return Q.to(W.dtype), loss
