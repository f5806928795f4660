# mutant: chunk = n // W, so the last n % W elements are never reduced
import torch
import torch.distributed as dist


def _exchange(send, recv, right, left):
    ops = [dist.P2POp(dist.isend, send, right), dist.P2POp(dist.irecv, recv, left)]
    for request in dist.batch_isend_irecv(ops):
        request.wait()


def ring_allreduce_(tensor: torch.Tensor, group=None) -> torch.Tensor:
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    if world == 1 or tensor.numel() == 0:
        return tensor
    flat = tensor.view(-1) if tensor.is_contiguous() else tensor.contiguous().view(-1)
    size = flat.numel() // world
    if size == 0:
        return tensor
    right, left = (rank + 1) % world, (rank - 1) % world
    buffer = torch.empty(size, dtype=flat.dtype)
    for step in range(world - 1):
        s = (rank - step) % world
        r = (rank - step - 1) % world
        _exchange(flat[s * size : (s + 1) * size], buffer, right, left)
        flat[r * size : (r + 1) * size] += buffer
    for step in range(world - 1):
        s = (rank + 1 - step) % world
        r = (rank - step) % world
        _exchange(flat[s * size : (s + 1) * size], flat[r * size : (r + 1) * size], right, left)
    if not tensor.is_contiguous():
        tensor.copy_(flat.view(tensor.shape))
    return tensor
