# mutant: blocking send-then-recv ring: every rank blocks in send, the ring deadlocks
import torch
import torch.distributed as dist


def ring_allreduce_(tensor: torch.Tensor, group=None) -> torch.Tensor:
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    if world == 1 or tensor.numel() == 0:
        return tensor
    flat = tensor.view(-1)
    n = flat.numel()
    size = -(-n // world)
    bounds = [(min(i * size, n), min((i + 1) * size, n)) for i in range(world)]
    right, left = (rank + 1) % world, (rank - 1) % world
    buffer = torch.empty(size, dtype=flat.dtype)
    for step in range(world - 1):
        s_lo, s_hi = bounds[(rank - step) % world]
        r_lo, r_hi = bounds[(rank - step - 1) % world]
        dist.send(flat[s_lo:s_hi].contiguous(), right)
        dist.recv(buffer[: r_hi - r_lo], left)
        flat[r_lo:r_hi] += buffer[: r_hi - r_lo]
    for step in range(world - 1):
        s_lo, s_hi = bounds[(rank + 1 - step) % world]
        r_lo, r_hi = bounds[(rank - step) % world]
        dist.send(flat[s_lo:s_hi].contiguous(), right)
        dist.recv(buffer[: r_hi - r_lo], left)
        flat[r_lo:r_hi] = buffer[: r_hi - r_lo]
    return tensor
