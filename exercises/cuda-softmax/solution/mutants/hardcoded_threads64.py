# mutant: the launch is hardcoded to 64 threads per block whatever `threads` is
import math

import numba
from numba import cuda

FULL_MASK = 0xFFFFFFFF
MAX_WARPS = 32
NEG_INF = -math.inf


@cuda.jit(device=True)
def merge(m_a, d_a, m_b, d_b):
    m = max(m_a, m_b)
    if m == NEG_INF:
        return m, 0.0
    return m, d_a * math.exp(m_a - m) + d_b * math.exp(m_b - m)


@cuda.jit
def softmax_kernel(x, y):
    warp_m = cuda.shared.array(MAX_WARPS, numba.float32)
    warp_d = cuda.shared.array(MAX_WARPS, numba.float32)
    stat = cuda.shared.array(2, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    T = cuda.blockDim.x
    cols = x.shape[1]
    lane = tid % 32
    warp = tid // 32
    nwarps = T // 32

    m = NEG_INF
    d = 0.0
    j = tid
    while j < cols:
        v = x[row, j]
        m_new = max(m, v)
        if m_new != NEG_INF:
            d = d * math.exp(m - m_new) + math.exp(v - m_new)
        m = m_new
        j += T

    offset = 16
    while offset > 0:
        m_o = cuda.shfl_down_sync(FULL_MASK, m, offset)
        d_o = cuda.shfl_down_sync(FULL_MASK, d, offset)
        m, d = merge(m, d, m_o, d_o)
        offset //= 2

    if lane == 0:
        warp_m[warp] = m
        warp_d[warp] = d
    cuda.syncthreads()

    if warp == 0:
        if lane < nwarps:
            m = warp_m[lane]
            d = warp_d[lane]
        else:
            m = NEG_INF
            d = 0.0
        offset = 16
        while offset > 0:
            m_o = cuda.shfl_down_sync(FULL_MASK, m, offset)
            d_o = cuda.shfl_down_sync(FULL_MASK, d, offset)
            m, d = merge(m, d, m_o, d_o)
            offset //= 2
        if lane == 0:
            stat[0] = m
            stat[1] = d
    cuda.syncthreads()

    M = stat[0]
    D = stat[1]
    j = tid
    while j < cols:
        v = x[row, j]
        if D > 0.0:
            y[row, j] = math.exp(v - M) / D
        else:
            y[row, j] = 0.0
        j += T


def softmax(x, y, threads: int) -> None:
    rows, cols = x.shape
    softmax_kernel[rows, 64](x, y)
