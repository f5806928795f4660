# mutant: no max subtraction: sums exp(x) directly and writes exp(x) / sum, which overflows for large inputs
"""Row softmax with numba.cuda: one block per row, sum of exp(x), then the write."""

import math

import numba
from numba import cuda

FULL_MASK = 0xFFFFFFFF
MAX_WARPS = 32


@cuda.jit(device=True)
def warp_sum(v):
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, offset)
        offset //= 2
    return v


@cuda.jit
def softmax_kernel(x, y):
    partial = cuda.shared.array(MAX_WARPS, numba.float32)
    total = cuda.shared.array(1, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    cols = x.shape[1]

    s = numba.float32(0.0)
    for j in range(tid, cols, threads):
        s += math.exp(x[row, j])
    s = warp_sum(s)
    lane = tid % 32
    warp = tid // 32
    if lane == 0:
        partial[warp] = s
    cuda.syncthreads()
    if warp == 0:
        warps = (threads + 31) // 32
        s = partial[lane] if lane < warps else numba.float32(0.0)
        s = warp_sum(s)
        if lane == 0:
            total[0] = s
    cuda.syncthreads()
    s = total[0]
    for j in range(tid, cols, threads):
        y[row, j] = math.exp(x[row, j]) / s if s > 0 else 0.0


def softmax(x, y, threads: int) -> None:
    softmax_kernel[x.shape[0], threads](x, y)
