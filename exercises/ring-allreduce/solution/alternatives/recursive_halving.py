# alternative: recursive halving and doubling for a power-of-two W, else a ring (blind solver)
# Rabenseifner recursive halving (reduce-scatter) + recursive doubling (all-gather) when the
# group size is a power of two; falls back to a ring otherwise. Each rank sends 2*log2(W)
# messages (<= 2(W-1)) and at most 2(W-1)*ceil(n/W) elements (chunks on the ceil grid).
# Each chunk is summed exactly once by its final owner's pair tree; results are copied.
from __future__ import annotations

import torch
import torch.distributed as dist


def _x(send_t, dst, recv_t, src, group):
    ops = []
    if send_t.numel():
        ops.append(dist.P2POp(dist.isend, send_t, dst, group))
    if recv_t.numel():
        ops.append(dist.P2POp(dist.irecv, recv_t, src, group))
    if ops:
        for w in dist.batch_isend_irecv(ops):
            w.wait()


def ring_allreduce_(tensor: torch.Tensor, group=None) -> torch.Tensor:
    W = dist.get_world_size(group)
    r = dist.get_rank(group)
    n = tensor.numel()
    if W == 1 or n == 0:
        return tensor
    G = (lambda i: i) if group is None else (lambda i: dist.get_global_rank(group, i))
    buf = torch.empty(n, dtype=tensor.dtype, device=tensor.device)
    buf.copy_(tensor.reshape(-1))
    c = -(-n // W)

    def b(i):
        return min(i * c, n)  # boundary of chunk i

    if W & (W - 1) == 0:
        lo, hi = 0, W  # chunk range this rank is responsible for
        steps = []
        d = W // 2
        while d >= 1:
            peer = r ^ d
            mid = lo + (hi - lo) // 2
            if r & d:
                keep, give = (mid, hi), (lo, mid)
            else:
                keep, give = (lo, mid), (mid, hi)
            tmp = torch.empty(b(keep[1]) - b(keep[0]), dtype=buf.dtype, device=buf.device)
            _x(buf[b(give[0]) : b(give[1])], G(peer), tmp, G(peer), group)
            buf[b(keep[0]) : b(keep[1])].add_(tmp)
            steps.append((peer, keep, give))
            lo, hi = keep
            d //= 2
        for peer, keep, give in reversed(steps):
            _x(buf[b(keep[0]) : b(keep[1])], G(peer), buf[b(give[0]) : b(give[1])], G(peer), group)
    else:
        nxt, prv = G((r + 1) % W), G((r - 1) % W)

        def ch(i):
            return buf[b(i) : b(i + 1)]

        for s in range(W - 1):
            t = torch.empty_like(ch((r - s - 1) % W))
            _x(ch((r - s) % W), nxt, t, prv, group)
            ch((r - s - 1) % W).add_(t)
        for s in range(W - 1):
            _x(ch((r + 1 - s) % W), nxt, ch((r - s) % W), prv, group)
    tensor.copy_(buf.view(tensor.shape))
    return tensor
