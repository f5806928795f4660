# mutant: no cuda.syncthreads() between the warps storing their (m, d) states and warp 0 reading them
"""Row softmax of a float32 matrix with numba.cuda: one block per row, one pass for (m, d).

Every thread walks its columns of the row (j = tid, tid + threads, ...) keeping a running
max m and a running sum d of exp(x - m), rescaled by exp(m_old - m_new) whenever the max
grows. The block merges its threads' (m, d) states (warp shuffles, then one value per warp
in shared memory), and a second walk over the row writes exp(x - M) / D. A row of only -inf
has M = -inf and D = 0 and is written as zeros.
"""

import math

import numba
from numba import cuda

FULL_MASK = 0xFFFFFFFF
MAX_WARPS = 32  # 1024 threads per block at most
NEG_INF = -math.inf


@cuda.jit(device=True)
def merge(m_a, d_a, m_b, d_b):
    """The (max, sum) state of the union of two parts of a row."""
    m = max(m_a, m_b)
    if m == NEG_INF:  # both parts empty or all -inf: exp(-inf - -inf) would be NaN
        return m, d_a + d_b
    return m, d_a * math.exp(m_a - m) + d_b * math.exp(m_b - m)


@cuda.jit(device=True)
def warp_merge(m, d):
    """Lane 0 ends with the state of the whole warp."""
    offset = 16
    while offset > 0:
        m_other = cuda.shfl_down_sync(FULL_MASK, m, offset)
        d_other = cuda.shfl_down_sync(FULL_MASK, d, offset)
        m, d = merge(m, d, m_other, d_other)
        offset //= 2
    return m, d


@cuda.jit
def softmax_kernel(x, y):
    warp_m = cuda.shared.array(MAX_WARPS, numba.float32)
    warp_d = cuda.shared.array(MAX_WARPS, numba.float32)
    row_state = cuda.shared.array(2, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    cols = x.shape[1]

    # 1. one pass over this thread's columns: running max and rescaled running sum
    m = numba.float32(NEG_INF)
    d = numba.float32(0.0)
    for j in range(tid, cols, threads):
        v = x[row, j]
        m_new = max(m, v)
        if m_new != NEG_INF:
            d = d * math.exp(m - m_new) + math.exp(v - m_new)
            m = m_new

    # 2. merge the block's states: each warp with shuffles, then warp 0 over the warps
    m, d = warp_merge(m, d)
    lane = tid % 32
    warp = tid // 32
    if lane == 0:
        warp_m[warp] = m
        warp_d[warp] = d
    if warp == 0:
        warps = (threads + 31) // 32
        if lane < warps:
            m = warp_m[lane]
            d = warp_d[lane]
        else:
            m = numba.float32(NEG_INF)
            d = numba.float32(0.0)
        m, d = warp_merge(m, d)
        if lane == 0:
            row_state[0] = m
            row_state[1] = d
    cuda.syncthreads()
    m = row_state[0]
    d = row_state[1]

    # 3. normalising write; an all -inf row (d == 0) is written as zeros
    if d > 0:
        for j in range(tid, cols, threads):
            y[row, j] = math.exp(x[row, j] - m) / d
    else:
        for j in range(tid, cols, threads):
            y[row, j] = 0.0


def softmax(x, y, threads: int) -> None:
    """y[r, :] = softmax(x[r, :]) for the float32 device arrays x, y of shape [rows, cols].

    One block of `threads` threads (a power of two, 32 to 1024) per row.
    """
    rows = x.shape[0]
    if rows == 0 or x.shape[1] == 0:
        return
    softmax_kernel[rows, threads](x, y)
