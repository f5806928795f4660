# mutant: gather_output uses all_gather_into_tensor and then reshapes the [W*B, o] result to [B, W*o], which interleaves the ranks' columns
"""Tensor-parallel linear layers."""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _all_reduce(tensor: torch.Tensor, group) -> torch.Tensor:
    out = tensor.contiguous().clone()
    dist.all_reduce(out, group=group)
    return out


class _CopyToGroup(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, group) -> torch.Tensor:
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return _all_reduce(grad, ctx.group), None


class _ReduceFromGroup(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, group) -> torch.Tensor:
        return _all_reduce(x, group)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return grad, None


class _GatherFromGroup(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, group) -> torch.Tensor:
        size, rank = dist.get_world_size(group), dist.get_rank(group)
        ctx.bounds = (rank * x.shape[-1], (rank + 1) * x.shape[-1])
        flat = x.reshape(-1, x.shape[-1]).contiguous()
        out = flat.new_empty((size * flat.shape[0], flat.shape[1]))
        dist.all_gather_into_tensor(out, flat, group=group)
        return out.reshape(*x.shape[:-1], size * x.shape[-1])

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        lo, hi = ctx.bounds
        return grad[..., lo:hi].contiguous(), None


def _shard(full: torch.Tensor, dim: int, group, what: str) -> torch.Tensor:
    """This rank's contiguous slice of ``full`` along ``dim``; ValueError if it is uneven."""
    size, rank = dist.get_world_size(group), dist.get_rank(group)
    if full.shape[dim] % size:
        raise ValueError(
            f"{what} = {full.shape[dim]} is not divisible by the group size {size}"
        )
    part = full.shape[dim] // size
    return full.narrow(dim, rank * part, part).clone()


class ColumnParallelLinear(torch.nn.Module):
    """y = x W^T + b with W's output dim (rows) split over the ranks of ``group``."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None, *,
                 gather_output: bool = False, group=None) -> None:
        super().__init__()
        self.group = group
        self.gather_output = gather_output
        self.weight = torch.nn.Parameter(_shard(weight, 0, group, "out_features"))
        self.bias = None if bias is None else torch.nn.Parameter(_shard(bias, 0, group, "out_features"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.linear(_CopyToGroup.apply(x, self.group), self.weight, self.bias)
        return _GatherFromGroup.apply(y, self.group) if self.gather_output else y


class RowParallelLinear(torch.nn.Module):
    """y = sum_r x_r W_r^T + b with W's input dim (columns) split over ``group``."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None, *,
                 group=None) -> None:
        super().__init__()
        self.group = group
        self.weight = torch.nn.Parameter(_shard(weight, 1, group, "in_features"))
        self.bias = None if bias is None else torch.nn.Parameter(bias.detach().clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = _ReduceFromGroup.apply(F.linear(x, self.weight), self.group)
        return y if self.bias is None else y + self.bias
