# mutant: the last tree step is folded into the warp's first load: warp 0 reads
# partial[tid] + partial[tid + 32] unconditionally. With T >= 64 this is right, but for one block
# of one warp (T = 32) slots 32..63 were never written in this launch: uninitialised shared
# memory (or leftovers of an earlier launch) is added. Violates README: T may be 32 ("T a power
# of two, 32 to 1024"; "numba track: ... one block of one warp").

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
    while s >= 64:
        if tid < s:
            partial[tid] += partial[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid < 32:
        v = partial[tid] + partial[tid + 32]   # last tree step folded into the warp
        o = 16
        while o > 0:
            v += cuda.shfl_down_sync(FULL_MASK, v, o)
            o //= 2
        if tid == 0:
            out[cuda.blockIdx.x] = v


def reduce_sum(x, blocks: int, threads: int) -> float:
    n = x.shape[0]
    partials = cuda.device_array(blocks, dtype=np.float32)
    block_sum[blocks, threads](x, partials, n)
    out = cuda.device_array(1, dtype=np.float32)
    block_sum[1, threads](partials, out, blocks)
    return float(out.copy_to_host()[0])
