# mutant: a separate pass-2 kernel loads one partial per thread (partials[tid] if tid < B) with no
# grid-stride loop, so when blocks > threads (e.g. reduce_sum(x, 40, 32)) the partials
# at index >= T are silently dropped. Violates README step 3 "Pass 2: one block reduces the B partial
# sums" and the interface "Launch your kernel with `blocks` x `threads`" (any blocks; step 1 "any n,
# any grid"). The CPU grader caps the grid at 8 x 256, so B <= T always.

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
            out[cuda.blockIdx.x] = v


@cuda.jit
def final_sum(partials, out, nparts):
    """Pass 2: one block, one partial per thread."""
    partial = cuda.shared.array(MAX_THREADS, numba.float32)
    tid = cuda.threadIdx.x
    partial[tid] = partials[tid] if tid < nparts else numba.float32(0.0)
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
            out[0] = v


def reduce_sum(x, blocks: int, threads: int) -> float:
    n = x.shape[0]
    partials = cuda.device_array(blocks, dtype=np.float32)
    block_sum[blocks, threads](x, partials, n)
    out = cuda.device_array(1, dtype=np.float32)
    final_sum[1, threads](partials, out, blocks)
    return float(out.copy_to_host()[0])
