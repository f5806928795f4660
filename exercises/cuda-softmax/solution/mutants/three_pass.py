# mutant: three passes over x (row max, then sum of exp(x - max), then the write): each element is loaded three times
"""Row softmax with numba.cuda: one block per row, the textbook max / sum / write passes."""

import math

import numba
from numba import cuda

FULL_MASK = 0xFFFFFFFF
MAX_WARPS = 32
NEG_INF = -math.inf


@cuda.jit(device=True)
def block_reduce(v, partial, result, is_max):
    """Every thread gets the block's max (is_max) or sum of v."""
    tid = cuda.threadIdx.x
    lane = tid % 32
    warp = tid // 32
    offset = 16
    while offset > 0:
        other = cuda.shfl_xor_sync(FULL_MASK, v, offset)
        v = max(v, other) if is_max else v + other
        offset //= 2
    if lane == 0:
        partial[warp] = v
    cuda.syncthreads()
    if warp == 0:
        warps = (cuda.blockDim.x + 31) // 32
        identity = numba.float32(NEG_INF) if is_max else numba.float32(0.0)
        v = partial[lane] if lane < warps else identity
        offset = 16
        while offset > 0:
            other = cuda.shfl_xor_sync(FULL_MASK, v, offset)
            v = max(v, other) if is_max else v + other
            offset //= 2
        if lane == 0:
            result[0] = v
    cuda.syncthreads()
    return result[0]


@cuda.jit
def softmax_kernel(x, y):
    partial_max = cuda.shared.array(MAX_WARPS, numba.float32)
    partial_sum = cuda.shared.array(MAX_WARPS, numba.float32)
    row_max = cuda.shared.array(1, numba.float32)
    row_sum = cuda.shared.array(1, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    cols = x.shape[1]

    m = numba.float32(NEG_INF)
    for j in range(tid, cols, threads):
        m = max(m, x[row, j])
    m = block_reduce(m, partial_max, row_max, True)

    s = numba.float32(0.0)
    if m != NEG_INF:
        for j in range(tid, cols, threads):
            s += math.exp(x[row, j] - m)
    s = block_reduce(s, partial_sum, row_sum, False)

    for j in range(tid, cols, threads):
        y[row, j] = math.exp(x[row, j] - m) / s if s > 0 else 0.0


def softmax(x, y, threads: int) -> None:
    softmax_kernel[x.shape[0], threads](x, y)
