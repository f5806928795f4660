# mutant: blocking ring where every rank first does dist.recv from its left neighbour and only then
# dist.send to its right: every rank waits for a message nobody has sent -> deadlock for W >= 2.
# Violates "No deadlock".
import torch, torch.distributed as dist

def ring_allreduce_(tensor, group=None):
    W = dist.get_world_size(group); r = dist.get_rank(group)
    if W == 1: return tensor
    flat = tensor.view(-1) if tensor.is_contiguous() else tensor.contiguous().view(-1)
    n = flat.numel(); c = -(-n // W)
    ch = [flat[min(i*c, n):min((i+1)*c, n)] for i in range(W)]
    nxt = dist.get_global_rank(group, (r+1) % W) if group is not None else (r+1) % W
    prv = dist.get_global_rank(group, (r-1) % W) if group is not None else (r-1) % W
    buf = torch.empty(c, dtype=flat.dtype, device=flat.device)
    for s in range(W-1):
        si, ri = (r - s) % W, (r - s - 1) % W
        b = buf[:ch[ri].numel()]
        dist.recv(b, prv, group)
        dist.send(ch[si], nxt, group)
        ch[ri].add_(b)
    for s in range(W-1):
        si, ri = (r + 1 - s) % W, (r - s) % W
        dist.recv(ch[ri], prv, group)
        dist.send(ch[si], nxt, group)
    if flat.data_ptr() != tensor.data_ptr() or not tensor.is_contiguous():
        tensor.copy_(flat.view(tensor.shape))
    return tensor
