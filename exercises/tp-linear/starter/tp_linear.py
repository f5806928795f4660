"""Megatron-style tensor-parallel linear layers.

Implement ColumnParallelLinear and RowParallelLinear below; check them with
`quizzer exercise tp-linear --check`. Read README.md (next to this file) for the interface,
the rules the grader enforces and the hints.
"""

from __future__ import annotations

import torch
import torch.distributed as dist


class ColumnParallelLinear(torch.nn.Module):
    """y = x W^T + b with the OUTPUT dim of W ([out, in]) split over the ranks of `group`.

    weight [out, in] and bias [out] (or None) are the FULL tensors, the same on every rank:
    keep this rank's rows as self.weight ([out/W, in]) and self.bias ([out/W]), both
    torch.nn.Parameter. forward(x [..., in]) returns [..., out/W], or [..., out] on every
    rank when gather_output=True. Backward all-reduces the input gradient over `group`.
    Raise ValueError when out is not divisible by the group size.
    """

    def __init__(
        self,
        weight: torch.Tensor,
        bias: torch.Tensor | None = None,
        *,
        gather_output: bool = False,
        group: dist.ProcessGroup | None = None,
    ) -> None:
        super().__init__()
        raise NotImplementedError("not implemented: ColumnParallelLinear.__init__")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("not implemented: ColumnParallelLinear.forward")


class RowParallelLinear(torch.nn.Module):
    """y = sum over ranks of x_r W_r^T, plus b once, with the INPUT dim of W split.

    weight [out, in] and bias [out] (or None) are the FULL tensors, the same on every rank:
    keep this rank's columns as self.weight ([out, in/W]) and the whole bias as self.bias
    ([out]), both torch.nn.Parameter. forward(x [..., in/W], this rank's slice of the
    input features) returns [..., out], the same on every rank, with one all-reduce; the
    backward needs no communication. Raise ValueError when in is not divisible by the
    group size.
    """

    def __init__(
        self,
        weight: torch.Tensor,
        bias: torch.Tensor | None = None,
        *,
        group: dist.ProcessGroup | None = None,
    ) -> None:
        super().__init__()
        raise NotImplementedError("not implemented: RowParallelLinear.__init__")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("not implemented: RowParallelLinear.forward")
