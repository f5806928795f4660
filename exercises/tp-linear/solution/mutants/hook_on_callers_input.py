# mutant: f is a gradient hook on the caller's x, not on a tensor the layer makes (blind solver)
"""f implemented as a hook on the caller's tensor x instead of on a fresh view."""
from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F


def _shard(t, world, rank, dim):
    size = t.shape[dim] // world
    return torch.nn.Parameter(t.detach().narrow(dim, rank * size, size).clone())


class ColumnParallelLinear(torch.nn.Module):
    def __init__(self, weight, bias=None, *, gather_output=False, group=None):
        super().__init__()
        world = dist.get_world_size(group)
        rank = dist.get_rank(group)
        if weight.shape[0] % world:
            raise ValueError(f"out={weight.shape[0]} not divisible by {world}")
        self.group, self.world, self.rank = group, world, rank
        self.gather_output = gather_output
        self.weight = _shard(weight, world, rank, 0)
        self.bias = None if bias is None else _shard(bias, world, rank, 0)

    def forward(self, x):
        xin = x
        if xin.requires_grad:
            group = self.group

            def hook(g):
                g = g.contiguous().clone()
                dist.all_reduce(g, group=group)
                return g

            xin.register_hook(hook)
        y = F.linear(xin, self.weight, self.bias)
        if not self.gather_output:
            return y
        yd = y.detach().contiguous()
        parts = [torch.empty_like(yd) for _ in range(self.world)]
        dist.all_gather(parts, yd, group=self.group)
        parts[self.rank] = y  # live shard: gradient flows only to this rank's columns
        return torch.cat(parts, dim=-1)


class RowParallelLinear(torch.nn.Module):
    def __init__(self, weight, bias=None, *, group=None):
        super().__init__()
        world = dist.get_world_size(group)
        rank = dist.get_rank(group)
        if weight.shape[1] % world:
            raise ValueError(f"in={weight.shape[1]} not divisible by {world}")
        self.group = group
        self.weight = _shard(weight, world, rank, 1)
        self.bias = None if bias is None else torch.nn.Parameter(bias.detach().clone())

    def forward(self, x):
        y = F.linear(x, self.weight)
        red = y.detach().contiguous().clone()
        dist.all_reduce(red, group=self.group)
        out = y + (red - y.detach())
        if self.bias is not None:
            out = out + self.bias
        return out
