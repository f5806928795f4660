# mutant: reduces a private copy, then points the tensor at it with tensor.set_ (blind solver)
from __future__ import annotations
import torch
import torch.distributed as dist


def ring_allreduce_(tensor: torch.Tensor, group=None) -> torch.Tensor:
    W = dist.get_world_size(group)
    r = dist.get_rank(group)
    n = tensor.numel()
    if W == 1 or n == 0:
        return tensor
    g = (lambda i: dist.get_global_rank(group, i)) if group is not None else (lambda i: i)
    nxt, prv = g((r + 1) % W), g((r - 1) % W)
    flat = tensor.reshape(-1).clone()
    c = (n + W - 1) // W
    ch = [flat[min(i * c, n):min((i + 1) * c, n)] for i in range(W)]

    def xchg(sbuf, rbuf):
        ops = []
        if sbuf.numel():
            ops.append(dist.P2POp(dist.isend, sbuf, nxt, group))
        if rbuf.numel():
            ops.append(dist.P2POp(dist.irecv, rbuf, prv, group))
        if ops:
            for w in dist.batch_isend_irecv(ops):
                w.wait()

    for s in range(W - 1):
        si, ri = (r - s) % W, (r - s - 1) % W
        tmp = torch.empty_like(ch[ri])
        xchg(ch[si], tmp)
        ch[ri].add_(tmp)
    for s in range(W - 1):
        si, ri = (r + 1 - s) % W, (r - s) % W
        xchg(ch[si], ch[ri])
    tensor.set_(flat.view(tensor.shape))
    return tensor
