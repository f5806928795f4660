# alternative: blocked loop relying on the block/group alignment assumption
"""Textbook blocked GPTQ that relies on the README assumption "block_size is a multiple of
group_size or the other way round" when picking the group's current weights.

gptq: quantize one linear layer with GPTQ (Frantar et al., 2022, arXiv:2210.17323).

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
    dtype = torch.float64 if W.dtype == torch.float64 else torch.float32
    W = W.detach().clone().to(dtype)
    H = H.detach().clone().to(dtype)
    ncol = W.shape[1]

    dead = torch.diag(H) == 0
    H[dead, dead] = 1
    W[:, dead] = 0

    if act_order:
        perm = torch.argsort(torch.diag(H), descending=True, stable=True)
        W = W[:, perm]
        H = H[perm][:, perm]
        invperm = torch.argsort(perm)

    damp = percdamp * torch.mean(torch.diag(H))
    H = H + damp * torch.eye(ncol, dtype=dtype, device=W.device)
    try:
        L = torch.linalg.cholesky(H)
        Hinv = torch.cholesky_inverse(L)
        U = torch.linalg.cholesky(Hinv, upper=True)
    except torch.linalg.LinAlgError as exc:
        raise ValueError("H is not positive definite; try a larger percdamp") from exc

    gs = ncol if group_size == -1 else group_size
    Q = torch.zeros_like(W)
    Losses = torch.zeros_like(W)
    for i1 in range(0, ncol, block_size):
        i2 = min(i1 + block_size, ncol)
        count = i2 - i1
        W1 = W[:, i1:i2].clone()
        Q1 = torch.zeros_like(W1)
        Err1 = torch.zeros_like(W1)
        U1 = U[i1:i2, i1:i2]
        for i in range(count):
            w = W1[:, i]
            d = U1[i, i]
            if (i1 + i) % gs == 0:
                if i + gs <= count:
                    grp = W1[:, i : i + gs]
                else:  # group starts at the block start and runs past it
                    grp = torch.cat([W1[:, i:], W[:, i2 : i1 + i + gs]], dim=1)
                scale, zero = quantize_params(grp, bits)
            q = quantize(w.unsqueeze(1), scale, zero, bits).flatten()
            Q1[:, i] = q
            err = (w - q) / d
            Losses[:, i1 + i] = err**2 / 2
            W1[:, i:] -= err.unsqueeze(1).matmul(U1[i, i:].unsqueeze(0))
            Err1[:, i] = err
        Q[:, i1:i2] = Q1
        W[:, i2:] -= Err1.matmul(U[i1:i2, i2:])

    if act_order:
        Q = Q[:, invperm]
    return Q.to(W.dtype), float(Losses.sum())
