# mutant: each thread sums its own contiguous chunk x[g*chunk : (g+1)*chunk] instead
# of a grid-stride loop: neighbouring threads read addresses `chunk` floats apart, so loads are not
# coalesced (several times slower on a GPU). Violates README step 1 "Each thread adds up x[i],
# x[i + B·T], x[i + 2·B·T], ... (a grid-stride loop ... neighbouring threads read neighbouring
# addresses, so every load is coalesced)".

import numba
import numpy as np
from numba import cuda

MAX_THREADS = 1024
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def block_sum(x, out, n):
    partial = cuda.shared.array(MAX_THREADS, numba.float32)
    tid = cuda.threadIdx.x
    g = cuda.grid(1)
    nthreads = cuda.gridsize(1)
    chunk = (n + nthreads - 1) // nthreads
    acc = numba.float32(0.0)
    for i in range(g * chunk, min(n, (g + 1) * chunk)):   # a contiguous chunk per thread
        acc += x[i]
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


def reduce_sum(x, blocks: int, threads: int) -> float:
    n = x.shape[0]
    partials = cuda.device_array(blocks, dtype=np.float32)
    block_sum[blocks, threads](x, partials, n)
    out = cuda.device_array(1, dtype=np.float32)
    block_sum[1, threads](partials, out, blocks)
    return float(out.copy_to_host()[0])
