# alternative: warp-first reduction: shuffles in every warp, one barrier, then warp 0
"""Warp-first reduction (Luitjens 2014). Every warp reduces its 32
values with shuffles first, lane 0 stores the warp sum in shared memory (one slot per warp,
at most 32), one barrier, then warp 0 reduces the <= 32 warp sums with shuffles.
Grid-stride loop for pass 1; pass 2 is the same kernel launched with one block."""

import numba
import numpy as np
from numba import cuda

MAX_THREADS = 1024
FULL_MASK = 0xFFFFFFFF


@cuda.jit(device=True)
def warp_sum(v):
    for k in range(5):
        v += cuda.shfl_down_sync(FULL_MASK, v, 16 >> k)
    return v


@cuda.jit
def block_sum(x, out, n):
    warp_sums = cuda.shared.array(32, numba.float32)
    tid = cuda.threadIdx.x
    lane = tid & 31
    wid = tid >> 5
    acc = numba.float32(0.0)
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        acc += x[i]
    acc = warp_sum(acc)
    if lane == 0:
        warp_sums[wid] = acc
    cuda.syncthreads()
    if wid == 0:
        nwarps = cuda.blockDim.x >> 5
        v = warp_sums[lane] if lane < nwarps else numba.float32(0.0)
        v = warp_sum(v)
        if lane == 0:
            out[cuda.blockIdx.x] = v


def reduce_sum(x, blocks: int, threads: int) -> float:
    partials = cuda.device_array(blocks, dtype=np.float32)
    total = cuda.device_array(1, dtype=np.float32)
    block_sum[blocks, threads](x, partials, x.shape[0])
    block_sum[1, threads](partials, total, blocks)
    return float(total.copy_to_host()[0])
