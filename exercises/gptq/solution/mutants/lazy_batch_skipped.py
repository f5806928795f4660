# mutant: the lazy batch update after each block is missing: later blocks never see the errors of earlier ones
"""GPTQ for one linear layer (Frantar et al., 2022, arXiv:2210.17323).

Quantize the columns (input features) of W one at a time; after each column, spread its
rounding error over the columns not yet quantized so that the layer's output on the
calibration inputs changes as little as possible. The inverse Hessian enters through U, the
upper Cholesky factor of H^-1 (U^T U = H^-1): row i of U gives the optimal update of the
remaining columns when column i is fixed. Columns are processed in blocks: updates inside a
block are applied at once, updates of the later columns once per block (lazy batch).
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
    """Quantize W [out, in] with Hessian H = 2 X X^T / n [in, in].

    Returns (Q, loss): Q dequantized, same shape, dtype and device as W; loss = sum of
    err^2 / 2 over all entries, err = (w - q) / U[i, i].
    """
    cols = W.shape[1]
    out_dtype = W.dtype
    dtype = torch.float64 if W.dtype == torch.float64 else torch.float32
    W = W.to(dtype).clone()
    H = H.to(device=W.device, dtype=dtype).clone()
    group = cols if group_size == -1 else group_size

    # dead inputs (never active in the calibration data): any value works, use 0
    dead = torch.diag(H) == 0
    H[dead, dead] = 1.0
    W[:, dead] = 0.0

    if act_order:  # largest diag(H) first: the most sensitive columns see the fewest errors
        perm = torch.argsort(torch.diag(H), descending=True, stable=True)
        W = W[:, perm]
        H = H[perm][:, perm]

    damp = percdamp * torch.mean(torch.diag(H))
    H += damp * torch.eye(cols, device=W.device, dtype=dtype)
    try:
        L = torch.linalg.cholesky(H)
        Hinv = torch.cholesky_inverse(L)
        U = torch.linalg.cholesky(Hinv, upper=True)
    except RuntimeError as exc:  # torch.linalg.LinAlgError
        raise ValueError(
            f"H + {damp:.3g} * I is not positive definite ({exc}); raise percdamp"
        ) from None
    if not torch.isfinite(U).all():
        raise ValueError("the Cholesky factor of H^-1 is not finite; raise percdamp")

    Q = torch.zeros_like(W)
    loss = torch.zeros((), device=W.device, dtype=dtype)
    scale = zero = None
    for b0 in range(0, cols, block_size):
        b1 = min(b0 + block_size, cols)
        W1 = W[:, b0:b1].clone()
        Err1 = torch.zeros_like(W1)
        U1 = U[b0:b1, b0:b1]
        for i in range(b1 - b0):
            col = b0 + i
            if col % group == 0:  # the grid of the group's weights as updated so far
                if group <= block_size:  # the group lies in this block: its working copy
                    scale, zero = quantize_params(W1[:, i : i + group], bits)
                else:  # the group starts at this block; later columns are up to date
                    scale, zero = quantize_params(W[:, col : col + group], bits)
            w = W1[:, i]
            q = quantize(w.unsqueeze(1), scale, zero, bits).flatten()
            Q[:, col] = q
            err = (w - q) / U1[i, i]
            loss += (err**2).sum() / 2
            W1[:, i:] -= err.unsqueeze(1) * U1[i, i:].unsqueeze(0)
            Err1[:, i] = err

    if act_order:
        Q = Q[:, torch.argsort(perm)]
    return Q.to(out_dtype), float(loss)
