# alternative: barriers inside block-uniform ifs (if T >= k), a flag in shared memory (blind solver)
# Variant: each barrier sits inside `if T >= k:` (T = blockDim.x, the same for every thread).
# Unrolled tree (one step per possible T, the test on T is uniform across the block and the
# barrier sits outside it), two distinct kernels, pass 2 strides over partials by blockDim.
import numba
import numpy as np
from numba import cuda

MAX_THREADS = 1024
FULL_MASK = 0xFFFFFFFF


@cuda.jit(device=True, inline=True)
def tree(sh, tid, T):
    if T >= 1024:
        if tid < 512:
            sh[tid] += sh[tid + 512]
        cuda.syncthreads()
    if T >= 512:
        if tid < 256:
            sh[tid] += sh[tid + 256]
        cuda.syncthreads()
    if T >= 256:
        if tid < 128:
            sh[tid] += sh[tid + 128]
        cuda.syncthreads()
    if T >= 128:
        if tid < 64:
            sh[tid] += sh[tid + 64]
        cuda.syncthreads()
    if T >= 64:
        if tid < 32:
            sh[tid] += sh[tid + 32]
        cuda.syncthreads()
    v = numba.float32(0.0)
    if tid < 32:
        v = sh[tid]
        for o in (16, 8, 4, 2, 1):
            v += cuda.shfl_down_sync(FULL_MASK, v, o)
    return v


@cuda.jit
def pass1(x, partials, n):
    sh = cuda.shared.array(MAX_THREADS, numba.float32)
    tid = cuda.threadIdx.x
    stride = cuda.blockDim.x * cuda.gridDim.x
    acc = numba.float32(0.0)
    for i in range(cuda.blockIdx.x * cuda.blockDim.x + tid, n, stride):
        acc += x[i]
    sh[tid] = acc
    cuda.syncthreads()
    v = tree(sh, tid, cuda.blockDim.x)
    if tid == 0:
        partials[cuda.blockIdx.x] = v


@cuda.jit
def pass2(partials, out, m):
    sh = cuda.shared.array(MAX_THREADS, numba.float32)
    tid = cuda.threadIdx.x
    acc = numba.float32(0.0)
    for j in range(tid, m, cuda.blockDim.x):
        acc += partials[j]
    sh[tid] = acc
    cuda.syncthreads()
    v = tree(sh, tid, cuda.blockDim.x)
    if tid == 0:
        out[0] = v


def reduce_sum(x, blocks: int, threads: int) -> float:
    n = x.shape[0]
    partials = cuda.device_array(blocks, dtype=np.float32)
    out = cuda.device_array(1, dtype=np.float32)
    pass1[blocks, threads](x, partials, n)
    pass2[1, threads](partials, out, blocks)
    return float(out.copy_to_host()[0])
