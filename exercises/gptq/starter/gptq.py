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
    """Quantize W [out, in] with Hessian H = 2 X X^T / n [in, in].

    Returns (Q, loss): Q dequantized, same shape, dtype and device as W; loss = sum of
    err^2 / 2 over all entries, err = (w - q) / U[i, i].
    Do not modify W or H; compute in float64 when W is float64, else in float32.
    """
    # TODO 1: copy W and H; dead inputs (diag(H) == 0): H[i, i] = 1 and W[:, i] = 0
    # TODO 2: act_order: permute columns of W and rows/columns of H by descending diag(H)
    # TODO 3: damp: H += percdamp * mean(diag(H)) * I; U = upper Cholesky factor of H^-1
    #         (a failed factorisation -> ValueError that suggests a larger percdamp)
    # TODO 4: for each block of block_size columns, for each column i in it:
    #           at the first column of a group, take the grid of the group's current weights
    #           q = quantize(w_i); err = (w_i - q) / U[i, i]
    #           update the rest of the block: W[:, i:] -= err * U[i, i:]
    #         after the block: W[:, end:] -= Err_block @ U[block, end:]
    # TODO 5: undo the permutation; return (Q in W's dtype, loss)
    raise NotImplementedError("gptq_quantize")
