# mutant: naive ring that passes the whole tensor around W-1 times ((W-1)*n elements sent)
import torch
import torch.distributed as dist


def ring_allreduce_(tensor: torch.Tensor, group=None) -> torch.Tensor:
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    if world == 1 or tensor.numel() == 0:
        return tensor
    right, left = (rank + 1) % world, (rank - 1) % world
    parts = {rank: tensor.contiguous().clone()}
    current = tensor.contiguous().clone()
    for step in range(world - 1):
        incoming = torch.empty_like(current)
        ops = [dist.P2POp(dist.isend, current, right), dist.P2POp(dist.irecv, incoming, left)]
        for request in dist.batch_isend_irecv(ops):
            request.wait()
        parts[(rank - step - 1) % world] = incoming
        current = incoming
    total = parts[0].clone()
    for r in range(1, world):  # same order everywhere: bitwise identical, just too many bytes
        total += parts[r]
    tensor.copy_(total)
    return tensor
