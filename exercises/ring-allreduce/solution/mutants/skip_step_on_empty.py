# mutant: 'optimisation' that skips a whole ring step (both its send AND its recv) when the chunk
# this rank would SEND is empty. For n < W (and n = W-1 ...) the neighbour still waits for
# a non-empty chunk -> deadlock (or a missing contribution). Violates "No deadlock" and
# "with n < W some are empty".
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
        if ch[si].numel() == 0: continue
        b = buf[:ch[ri].numel()]
        ops = [dist.P2POp(dist.isend, ch[si], nxt, group), dist.P2POp(dist.irecv, b, prv, group)]
        for w in dist.batch_isend_irecv(ops): w.wait()
        ch[ri].add_(b)
    for s in range(W-1):
        si, ri = (r + 1 - s) % W, (r - s) % W
        if ch[si].numel() == 0: continue
        ops = [dist.P2POp(dist.isend, ch[si], nxt, group), dist.P2POp(dist.irecv, ch[ri], prv, group)]
        for w in dist.batch_isend_irecv(ops): w.wait()
    if flat.data_ptr() != tensor.data_ptr() or not tensor.is_contiguous():
        tensor.copy_(flat.view(tensor.shape))
    return tensor
