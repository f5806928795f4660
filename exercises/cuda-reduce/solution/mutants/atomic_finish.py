# mutant: finishes with a float cuda.atomic.add across blocks (one launch, no pass 2).
# Violates README "Not allowed: finishing with float `atomicAdd` across blocks" (the block order,
# hence the rounding, changes between runs on hardware; the simulator runs blocks in order).

import numba
import numpy as np
from numba import cuda

MAX_THREADS = 1024
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def block_sum(x, out, n):
    partial = cuda.shared.array(MAX_THREADS, numba.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = numba.float32(0.0)
    while i < n:
        acc += x[i]
        i += stride
    partial[tid] = acc
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s >= 32:
        if tid < s:
            partial[tid] += partial[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid < 32:
        v = partial[tid]
        o = 16
        while o > 0:
            v += cuda.shfl_down_sync(FULL_MASK, v, o)
            o //= 2
        if tid == 0:
            cuda.atomic.add(out, 0, v)


def reduce_sum(x, blocks: int, threads: int) -> float:
    n = x.shape[0]
    out = cuda.to_device(np.zeros(1, dtype=np.float32))
    block_sum[blocks, threads](x, out, n)   # every block atomically adds its sum
    return float(out.copy_to_host()[0])
