# alternative: no autograd.Function: a gradient hook all-reduces dL/dx, and the forward
# all-reduce is spliced in with the detach trick (value of the sum, gradient of the part)
"""Tensor-parallel linear layers built from tensor hooks and detach() only."""

from __future__ import annotations

import torch
import torch.distributed as dist


def _split(full: torch.Tensor, dim: int, group, name: str) -> torch.nn.Parameter:
    world = dist.get_world_size(group=group)
    me = dist.get_rank(group=group)
    pieces = full.shape[dim]
    if pieces % world != 0:
        raise ValueError(f"{name}={pieces} cannot be split evenly over {world} ranks")
    return torch.nn.Parameter(torch.chunk(full.detach(), world, dim=dim)[me].clone())


def _summed(part: torch.Tensor, group) -> torch.Tensor:
    """The sum of ``part`` over the group, with the gradient of ``part`` alone."""
    with torch.no_grad():
        total = part.detach().clone()
        dist.all_reduce(total, group=group)
    return part + (total - part.detach())


class ColumnParallelLinear(torch.nn.Module):
    def __init__(self, weight, bias=None, *, gather_output=False, group=None):
        super().__init__()
        self.group = group
        self.gather_output = gather_output
        self.weight = _split(weight, 0, group, "out_features")
        self.bias = None if bias is None else _split(bias, 0, group, "out_features")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        alias = x.view_as(x)  # a private node: the hook touches only this layer's path
        if alias.requires_grad:
            group = self.group

            def reduce_grad(grad: torch.Tensor) -> torch.Tensor:
                grad = grad.clone()
                dist.all_reduce(grad, group=group)
                return grad

            alias.register_hook(reduce_grad)
        local = alias @ self.weight.t()
        if self.bias is not None:
            local = local + self.bias
        if not self.gather_output:
            return local
        pieces = [torch.zeros_like(local) for _ in range(dist.get_world_size(group=self.group))]
        dist.all_gather(pieces, local.detach().contiguous(), group=self.group)
        pieces[dist.get_rank(group=self.group)] = local  # only our block carries a gradient
        return torch.cat(pieces, dim=-1)


class RowParallelLinear(torch.nn.Module):
    def __init__(self, weight, bias=None, *, group=None):
        super().__init__()
        self.group = group
        self.weight = _split(weight, 1, group, "in_features")
        self.bias = None if bias is None else torch.nn.Parameter(bias.detach().clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = _summed(x @ self.weight.t(), self.group)
        return out if self.bias is None else out + self.bias
