# mutant: the column layer's parameters are allocated in the default float32 (blind solver)
"""Column layer allocates its parameters with torch.empty (default dtype) and copies into them."""
from __future__ import annotations

import torch
import torch.distributed as dist


class _Copy(torch.autograd.Function):  # Megatron f
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        g = g.contiguous().clone()
        dist.all_reduce(g, op=dist.ReduceOp.SUM, group=ctx.group)
        return g, None


class _Reduce(torch.autograd.Function):  # Megatron g
    @staticmethod
    def forward(ctx, y, group):
        y = y.contiguous().clone()
        dist.all_reduce(y, op=dist.ReduceOp.SUM, group=group)
        return y

    @staticmethod
    def backward(ctx, g):
        return g, None


class _Gather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y, group):
        world, rank = dist.get_world_size(group), dist.get_rank(group)
        ctx.rank, ctx.size = rank, y.shape[-1]
        y = y.contiguous()
        bufs = [torch.empty_like(y) for _ in range(world)]
        dist.all_gather(bufs, y, group=group)
        return torch.cat(bufs, dim=-1)

    @staticmethod
    def backward(ctx, g):
        return g.narrow(-1, ctx.rank * ctx.size, ctx.size).contiguous(), None


class ColumnParallelLinear(torch.nn.Module):
    def __init__(self, weight, bias=None, *, gather_output=False, group=None):
        super().__init__()
        n, r = dist.get_world_size(group), dist.get_rank(group)
        out, inn = weight.shape
        if out % n:
            raise ValueError("out % world != 0")
        self.group, self.gather_output = group, gather_output
        self.weight = torch.nn.Parameter(torch.empty(out // n, inn))
        with torch.no_grad():
            self.weight.copy_(weight.reshape(n, out // n, inn)[r])
        if bias is None:
            self.bias = None
        else:
            self.bias = torch.nn.Parameter(torch.empty(out // n))
            with torch.no_grad():
                self.bias.copy_(bias.reshape(n, out // n)[r])

    def forward(self, x):
        x = _Copy.apply(x, self.group)
        y = torch.einsum("...i,oi->...o", x, self.weight)
        if self.bias is not None:
            y = y + self.bias
        if self.gather_output:
            y = _Gather.apply(y, self.group)
        return y


class RowParallelLinear(torch.nn.Module):
    def __init__(self, weight, bias=None, *, group=None):
        super().__init__()
        n, r = dist.get_world_size(group), dist.get_rank(group)
        out, inn = weight.shape
        if inn % n:
            raise ValueError("in % world != 0")
        self.group = group
        self.weight = torch.nn.Parameter(weight.detach().reshape(out, n, inn // n)[:, r].clone())
        self.register_parameter(
            "bias", None if bias is None else torch.nn.Parameter(bias.detach().clone()))

    def forward(self, x):
        y = _Reduce.apply(torch.einsum("...i,oi->...o", x, self.weight), self.group)
        return y if self.bias is None else y + self.bias
