# mutant: for n <= 1024 the sum is taken on the host (blind solver)
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
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = numba.float32(0.0)
    while i < n:
        acc += x[i]
        i += stride
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
    if n <= 1024:  # not worth a launch
        return float(np.sum(x.copy_to_host(), dtype=np.float32))
    partials = cuda.device_array(blocks, dtype=np.float32)
    block_sum[blocks, threads](x, partials, n)
    res = cuda.device_array(1, dtype=np.float32)
    block_sum[1, threads](partials, res, blocks)
    return float(res.copy_to_host()[0])
