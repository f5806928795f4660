# mutant: ignores the `group` argument: uses the default (world) group's size/rank and world
# ranks as peers. Violates "Called on every rank of `group` (default: the whole world)".
# With a subgroup (e.g. ranks [1,2] of 4) it sums over / waits for ranks outside the group.
import torch, torch.distributed as dist

def ring_allreduce_(tensor, group=None):
    W = dist.get_world_size(); r = dist.get_rank()
    if W == 1: return tensor
    flat = tensor.view(-1) if tensor.is_contiguous() else tensor.contiguous().view(-1)
    n = flat.numel(); c = -(-n // W)
    ch = [flat[min(i*c, n):min((i+1)*c, n)] for i in range(W)]
    nxt, prv = (r+1) % W, (r-1) % W
    buf = torch.empty(c, dtype=flat.dtype, device=flat.device)
    for s in range(W-1):
        si, ri = (r - s) % W, (r - s - 1) % W
        b = buf[:ch[ri].numel()]
        ops = [dist.P2POp(dist.isend, ch[si], nxt), dist.P2POp(dist.irecv, b, prv)]
        for w in dist.batch_isend_irecv(ops): w.wait()
        ch[ri].add_(b)
    for s in range(W-1):
        si, ri = (r + 1 - s) % W, (r - s) % W
        ops = [dist.P2POp(dist.isend, ch[si], nxt), dist.P2POp(dist.irecv, ch[ri], prv)]
        for w in dist.batch_isend_irecv(ops): w.wait()
    if flat.data_ptr() != tensor.data_ptr() or not tensor.is_contiguous():
        tensor.copy_(flat.view(tensor.shape))
    return tensor
