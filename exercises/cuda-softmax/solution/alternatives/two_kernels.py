# alternative: two launches (row statistics to global memory, then the write), one exp per element
"""Row softmax with numba.cuda in two kernels, each one block per row.

``row_stats`` keeps one exp per element: when a value beats the running max the old sum is
rescaled once (d * exp(m - v) + 1), otherwise exp(v - m) is added. Warps merge with xor
butterflies (every lane ends with the warp's state), warp 0 merges the warps, and thread 0
stores the row's (M, 1/D) in a small global array that ``row_write`` reads.
"""

import math

import numba
import numpy as np
from numba import cuda

MASK = 0xFFFFFFFF
NEG_INF = -math.inf


@cuda.jit(device=True)
def join(m1, d1, m2, d2):
    m = max(m1, m2)
    if m == NEG_INF:
        return m, numba.float32(0.0)
    return m, d1 * math.exp(m1 - m) + d2 * math.exp(m2 - m)


@cuda.jit(device=True)
def butterfly(m, d):
    for k in range(5):
        lanes = 16 >> k
        m2 = cuda.shfl_xor_sync(MASK, m, lanes)
        d2 = cuda.shfl_xor_sync(MASK, d, lanes)
        m, d = join(m, d, m2, d2)
    return m, d


@cuda.jit
def row_stats(x, stats):
    sm = cuda.shared.array(32, numba.float32)
    sd = cuda.shared.array(32, numba.float32)
    row, t, n = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    m = numba.float32(NEG_INF)
    d = numba.float32(0.0)
    for j in range(t, x.shape[1], n):
        v = x[row, j]
        if v > m:
            d = d * math.exp(m - v) + numba.float32(1.0)
            m = v
        elif v != NEG_INF:
            d += math.exp(v - m)
    m, d = butterfly(m, d)
    if t % 32 == 0:
        sm[t // 32] = m
        sd[t // 32] = d
    cuda.syncthreads()
    if t < 32:
        if t < n // 32:
            m, d = sm[t], sd[t]
        else:
            m, d = numba.float32(NEG_INF), numba.float32(0.0)
        m, d = butterfly(m, d)
        if t == 0:
            stats[row, 0] = m
            stats[row, 1] = numba.float32(1.0) / d if d > 0 else numba.float32(0.0)


@cuda.jit
def row_write(x, stats, y):
    row, t, n = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    m = stats[row, 0]
    inv = stats[row, 1]
    for j in range(t, x.shape[1], n):
        y[row, j] = math.exp(x[row, j] - m) * inv if inv > 0 else numba.float32(0.0)


def softmax(x, y, threads: int) -> None:
    """Row softmax of the [rows, cols] float32 device array x into y."""
    rows = x.shape[0]
    stats = cuda.device_array((rows, 2), dtype=np.float32)
    row_stats[rows, threads](x, stats)
    row_write[rows, threads](x, stats, y)
