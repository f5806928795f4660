# mutant: flattens with reshape(-1), which silently COPIES a non-contiguous tensor (a transposed
# 2-D view, a strided slice); the sum lands in the copy and is never written back, and the
# (unchanged) input is returned. Violates "it replaces `tensor` **in place** with the
# element-wise SUM ... and returns it". Contiguous inputs work.
import torch, torch.distributed as dist

def ring_allreduce_(tensor, group=None):
    W = dist.get_world_size(group); r = dist.get_rank(group)
    if W == 1: return tensor
    flat = tensor.reshape(-1)
    n = flat.numel(); c = -(-n // W)
    ch = [flat[min(i*c, n):min((i+1)*c, n)] for i in range(W)]
    nxt = dist.get_global_rank(group, (r+1) % W) if group is not None else (r+1) % W
    prv = dist.get_global_rank(group, (r-1) % W) if group is not None else (r-1) % W
    buf = torch.empty(c, dtype=flat.dtype, device=flat.device)
    for s in range(W-1):
        si, ri = (r - s) % W, (r - s - 1) % W
        b = buf[:ch[ri].numel()]
        ops = [dist.P2POp(dist.isend, ch[si], nxt, group), dist.P2POp(dist.irecv, b, prv, group)]
        for w in dist.batch_isend_irecv(ops): w.wait()
        ch[ri].add_(b)
    for s in range(W-1):
        si, ri = (r + 1 - s) % W, (r - s) % W
        ops = [dist.P2POp(dist.isend, ch[si], nxt, group), dist.P2POp(dist.irecv, ch[ri], prv, group)]
        for w in dist.batch_isend_irecv(ops): w.wait()
    return tensor
