# alternative: one autograd.Function per layer with hand-written gradients (no autograd
# through the matmuls) and all_gather_into_tensor for gather_output
"""Tensor-parallel linear layers with explicit forward and backward formulas."""

from __future__ import annotations

import torch
import torch.distributed as dist


def _rows(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1, t.shape[-1])


class _ColumnFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, gather, group):
        ctx.save_for_backward(x, weight)
        ctx.has_bias, ctx.gather, ctx.group = bias is not None, gather, group
        y = x.matmul(weight.t())
        if bias is not None:
            y = y + bias
        if not gather:
            return y
        size = dist.get_world_size(group)
        # all_gather_into_tensor stacks the shards along dim 0: [size * d0, ...]
        stacked = y.new_empty((size * y.shape[0], *y.shape[1:]))
        dist.all_gather_into_tensor(stacked, y.contiguous(), group=group)
        return torch.cat(stacked.chunk(size, dim=0), dim=-1)  # shard k: columns k*o:(k+1)*o

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        if ctx.gather:
            part = weight.shape[0]
            start = dist.get_rank(ctx.group) * part
            grad = grad[..., start : start + part]
        g2 = _rows(grad)
        grad_x = grad.matmul(weight).contiguous()
        dist.all_reduce(grad_x, group=ctx.group)
        grad_w = g2.t().matmul(_rows(x))
        grad_b = g2.sum(0) if ctx.has_bias else None
        return grad_x, grad_w, grad_b, None, None


class _RowFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, group):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        y = x.matmul(weight.t()).contiguous()
        dist.all_reduce(y, group=group)
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        g2 = _rows(grad)
        grad_b = g2.sum(0) if ctx.has_bias else None
        return grad.matmul(weight), g2.t().matmul(_rows(x)), grad_b, None


def _even(n: int, group, what: str) -> int:
    size = dist.get_world_size(group)
    if n % size:
        raise ValueError(f"{what} ({n}) must be a multiple of the group size ({size})")
    return n // size


class ColumnParallelLinear(torch.nn.Module):
    def __init__(self, weight, bias=None, *, gather_output=False, group=None):
        super().__init__()
        part = _even(weight.shape[0], group, "out_features")
        lo = dist.get_rank(group) * part
        self.weight = torch.nn.Parameter(weight.detach()[lo : lo + part].clone())
        self.bias = (
            None if bias is None else torch.nn.Parameter(bias.detach()[lo : lo + part].clone())
        )
        self.gather_output, self.group = gather_output, group

    def forward(self, x):
        return _ColumnFn.apply(x, self.weight, self.bias, self.gather_output, self.group)


class RowParallelLinear(torch.nn.Module):
    def __init__(self, weight, bias=None, *, group=None):
        super().__init__()
        part = _even(weight.shape[1], group, "in_features")
        lo = dist.get_rank(group) * part
        self.weight = torch.nn.Parameter(weight.detach()[:, lo : lo + part].clone())
        self.bias = None if bias is None else torch.nn.Parameter(bias.detach().clone())
        self.group = group

    def forward(self, x):
        return _RowFn.apply(x, self.weight, self.bias, self.group)
