# mutant: each block sums its own contiguous chunk, striding by blockDim, not by the grid (blind solver)
import numba
import numpy as np
from numba import cuda

MAX_THREADS = 1024
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def block_sum(x, out, n):
    partial = cuda.shared.array(MAX_THREADS, numba.float32)
    tid = cuda.threadIdx.x
    T = cuda.blockDim.x
    chunk = (n + cuda.gridDim.x - 1) // cuda.gridDim.x
    lo = cuda.blockIdx.x * chunk
    hi = min(lo + chunk, n)
    i = lo + tid
    acc = numba.float32(0.0)
    while i < hi:
        acc += x[i]
        i += T
    partial[tid] = acc
    cuda.syncthreads()
    s = T // 2
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
    res = cuda.device_array(1, dtype=np.float32)
    block_sum[1, threads](partials, res, blocks)
    return float(res.copy_to_host()[0])
