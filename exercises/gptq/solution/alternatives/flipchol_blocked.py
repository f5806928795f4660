# alternative: U from the flipped Cholesky factor of H, no explicit inverse
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
    """Blocked GPTQ; U obtained from a Cholesky factor of the *reversed* H (no explicit inverse).

    If P is the reversal permutation and P H P = L L^T, then U = P L^-1 P is upper triangular
    with U^T U = H^-1, i.e. exactly the upper Cholesky factor of H^-1.
    """
    dev = W.device
    dtype = torch.float64 if W.dtype == torch.float64 else torch.float32
    Wd = W.detach().to(device=dev, dtype=dtype).clone()
    Hd = H.detach().to(device=dev, dtype=dtype).clone()
    _rows, ncol = Wd.shape

    diag = torch.diagonal(Hd)  # a view into Hd
    dead = diag == 0
    diag[dead] = 1.0
    Wd[:, dead] = 0.0

    perm = None
    if act_order:
        perm = torch.argsort(torch.diagonal(Hd), descending=True, stable=True)
        Wd = Wd[:, perm]
        Hd = Hd[perm][:, perm]

    lam = percdamp * torch.mean(torch.diagonal(Hd))
    Hd = Hd + lam * torch.eye(ncol, device=dev, dtype=dtype)

    Hr = torch.flip(Hd, (0, 1))
    L, info = torch.linalg.cholesky_ex(Hr)
    if int(info) != 0 or not bool(torch.isfinite(L).all()):
        raise ValueError("H is not positive definite (Cholesky failed); use a larger percdamp")
    eye = torch.eye(ncol, device=dev, dtype=dtype)
    Linv = torch.linalg.solve_triangular(L, eye, upper=False)
    U = torch.flip(Linv, (0, 1))
    if not bool(torch.isfinite(U).all()):
        raise ValueError("H is not positive definite; use a larger percdamp")

    gs = ncol if group_size == -1 else group_size
    Q = torch.zeros_like(Wd)
    Err = torch.zeros_like(Wd)
    scale = zero = None
    for b0 in range(0, ncol, block_size):
        b1 = min(b0 + block_size, ncol)
        W1 = Wd[:, b0:b1].clone()
        for i in range(b1 - b0):
            j = b0 + i
            if j % gs == 0:
                g1 = min(j + gs, ncol)
                inb = min(g1, b1)
                parts = [W1[:, i : inb - b0]]
                if g1 > b1:  # group reaches past this block: add the pending block updates
                    parts.append(Wd[:, b1:g1] - Err[:, b0:j] @ U[b0:j, b1:g1])
                scale, zero = quantize_params(torch.cat(parts, dim=1), bits)
            w = W1[:, i : i + 1]
            q = quantize(w, scale, zero, bits)
            e = (w - q) / U[j, j]
            Q[:, j : j + 1] = q
            Err[:, j : j + 1] = e
            W1[:, i:] -= e * U[j : j + 1, j:b1]
        if b1 < ncol:
            Wd[:, b1:] -= Err[:, b0:b1] @ U[b0:b1, b1:]

    loss = float((Err * Err).sum() / 2)
    if perm is not None:
        Q = Q[:, torch.argsort(perm)]
    return Q.to(W.dtype), loss
