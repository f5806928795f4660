"""Reference: bandwidth-optimal ring all-reduce (reduce-scatter, then all-gather)."""

from __future__ import annotations

import torch
import torch.distributed as dist


def _exchange(send: torch.Tensor, recv: torch.Tensor, right: int, left: int, group) -> None:
    """Send to the right neighbour while receiving from the left one (never blocks both).

    Empty chunks (n < W) are skipped on both sides: each rank knows every chunk's bounds.
    """
    ops = []
    if send.numel():
        ops.append(dist.P2POp(dist.isend, send, right, group))
    if recv.numel():
        ops.append(dist.P2POp(dist.irecv, recv, left, group))
    if ops:
        for request in dist.batch_isend_irecv(ops):
            request.wait()


def ring_allreduce_(tensor: torch.Tensor, group=None) -> torch.Tensor:
    """Sum ``tensor`` over every rank of ``group``, in place, with 2(W-1) point-to-point steps."""
    world = dist.get_world_size(group)
    rank = dist.get_rank(group)
    if world == 1 or tensor.numel() == 0:
        return tensor
    flat = tensor.view(-1) if tensor.is_contiguous() else tensor.contiguous().view(-1)
    n = flat.numel()
    size = -(-n // world)  # ceil(n / W): the last chunks may be short or empty
    bounds = [(min(i * size, n), min((i + 1) * size, n)) for i in range(world)]

    def peer(r: int) -> int:
        r %= world
        return r if group is None else dist.get_global_rank(group, r)

    right, left = peer(rank + 1), peer(rank - 1)
    buffer = torch.empty(size, dtype=flat.dtype, device=flat.device)

    # Reduce-scatter: after W-1 steps rank r owns the full sum of chunk (r + 1) % W.
    for step in range(world - 1):
        s_lo, s_hi = bounds[(rank - step) % world]
        r_lo, r_hi = bounds[(rank - step - 1) % world]
        incoming = buffer[: r_hi - r_lo]
        _exchange(flat[s_lo:s_hi], incoming, right, left, group)
        flat[r_lo:r_hi] += incoming

    # All-gather: pass the finished chunks around the ring, overwriting.
    for step in range(world - 1):
        s_lo, s_hi = bounds[(rank + 1 - step) % world]
        r_lo, r_hi = bounds[(rank - step) % world]
        _exchange(flat[s_lo:s_hi], flat[r_lo:r_hi], right, left, group)

    if not tensor.is_contiguous():  # we worked on a copy
        tensor.copy_(flat.view(tensor.shape))
    return tensor
