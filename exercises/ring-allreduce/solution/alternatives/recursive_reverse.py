# alternative: counter-clockwise ring, recursive steps, blocking send/recv ordered by parity
"""Correct, non-textbook: counter-clockwise ring written recursively with blocking
send/recv ordered by rank parity.

Data moves to rank-1 (receives from rank+1).  Chunk boundaries are an explicit list of
(start, stop) offsets with ceil(n/W) elements (last ones short or empty).  Each phase is
a recursive function of the step number.  Even ranks send before receiving, odd ranks
receive before sending, so blocking calls cannot all wait on each other.  2(W-1)
messages of <= ceil(n/W) elements per rank; each chunk is reduced by one chain of
additions and then copied, so every rank ends bitwise identical.
"""

from __future__ import annotations

import torch
import torch.distributed as dist


def ring_allreduce_(tensor: torch.Tensor, group=None) -> torch.Tensor:
    W = dist.get_world_size(group)
    r = dist.get_rank(group)
    if W < 2:
        return tensor
    g = (lambda i: i) if group is None else (lambda i: dist.get_global_rank(group, i))
    left, right = g((r - 1) % W), g((r + 1) % W)

    contiguous = tensor.is_contiguous()
    flat = (tensor if contiguous else tensor.clone(memory_format=torch.contiguous_format)).view(-1)
    n = flat.numel()
    step = (n + W - 1) // W
    bounds = [(min(i * step, n), min(i * step + step, n)) for i in range(W)]
    scratch = flat.new_empty(step)

    def chunk(i):
        a, b = bounds[i % W]
        return flat[a:b]

    def exchange(out_t, in_t):
        if r % 2 == 0:
            dist.send(out_t, left, group)
            dist.recv(in_t, right, group)
        else:
            dist.recv(in_t, right, group)
            dist.send(out_t, left, group)

    def reduce_scatter(s):
        if s == W - 1:
            return
        dst = chunk(r + s + 1)
        tmp = scratch[: dst.numel()]
        exchange(chunk(r + s), tmp)
        torch.add(dst, tmp, out=dst)
        reduce_scatter(s + 1)

    def all_gather(s):
        if s == W - 1:
            return
        exchange(chunk(r - 1 + s), chunk(r + s))
        all_gather(s + 1)

    reduce_scatter(0)
    all_gather(0)
    if not contiguous:
        tensor.copy_(flat.view(tensor.shape))
    return tensor
