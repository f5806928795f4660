# alternative: each chunk reduced at its owner and sent straight back, isend/irecv (blind solver)
# Direct reduce-scatter to each chunk's owner (owner sums in rank order 0..W-1),
# then the owner sends its reduced chunk directly to every other rank. Balanced chunks
# via tensor_split (largest = ceil(n/W)). Uses isend/irecv, not batch.
from __future__ import annotations

import torch
import torch.distributed as dist


def ring_allreduce_(tensor: torch.Tensor, group=None) -> torch.Tensor:
    W = dist.get_world_size(group)
    me = dist.get_rank(group)
    n = tensor.numel()
    if W == 1:
        return tensor
    glob = [dist.get_global_rank(group, i) if group is not None else i for i in range(W)]
    work = torch.empty(n, dtype=tensor.dtype, device=tensor.device)
    work.copy_(tensor.reshape(-1))
    parts = list(torch.tensor_split(work, W))
    mine = parts[me]
    # phase 1: everyone sends part j to owner j
    reqs = []
    inbox = {}
    for j in range(W):
        if j == me or parts[j].numel() == 0:
            continue
        reqs.append(dist.isend(parts[j], glob[j], group))
    if mine.numel():
        for j in range(W):
            if j == me:
                continue
            inbox[j] = torch.empty_like(mine)
            reqs.append(dist.irecv(inbox[j], glob[j], group))
    for q in reqs:
        q.wait()
    if mine.numel():
        acc = None
        for j in range(W):
            piece = mine if j == me else inbox[j]
            acc = piece.clone() if acc is None else acc + piece
        mine.copy_(acc)
    # phase 2: owner j sends its result to everyone
    reqs = []
    for j in range(W):
        if j == me:
            if mine.numel():
                for k in range(W):
                    if k != me:
                        reqs.append(dist.isend(mine, glob[k], group))
        elif parts[j].numel():
            reqs.append(dist.irecv(parts[j], glob[j], group))
    for q in reqs:
        q.wait()
    tensor.copy_(work.view(tensor.shape))
    return tensor
