# mutant: sums int64 through float64 (casts the working buffer to float64, reduces, rounds back).
# Same itemsize (8 bytes) so the byte bound is unchanged, and exact for |values| < 2**53,
# but large int64 values lose their low bits. Violates "int64 (exact)".
import torch, torch.distributed as dist

def ring_allreduce_(tensor, group=None):
    W = dist.get_world_size(group); r = dist.get_rank(group)
    if W == 1: return tensor
    orig = tensor
    flat = tensor.reshape(-1).to(torch.float64) if not tensor.is_floating_point() else (tensor.view(-1) if tensor.is_contiguous() else tensor.contiguous().view(-1))
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
    if flat.data_ptr() != tensor.data_ptr() or not tensor.is_contiguous() or flat.dtype != tensor.dtype:
        tensor.copy_(flat.view(tensor.shape).to(tensor.dtype))
    return tensor
