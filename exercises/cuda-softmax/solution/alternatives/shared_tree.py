# alternative: no shuffles; the block merges its threads' (m, d) pairs in a shared-memory tree
"""Row softmax with numba.cuda: one block per row; every thread keeps an online (m, d) state
over its columns, then the block halves the active threads each step, merging pairs of
states in shared memory with a barrier after every step, down to slot 0."""

import math

import numba
from numba import cuda

MAX_THREADS = 1024
NEG_INF = -math.inf


@cuda.jit(device=True)
def combine(m_a, d_a, m_b, d_b):
    if m_b > m_a:
        m_a, d_a, m_b, d_b = m_b, d_b, m_a, d_a
    if m_b == NEG_INF:  # the other side is empty (or only -inf): nothing to add
        return m_a, d_a
    return m_a, d_a + d_b * math.exp(m_b - m_a)


@cuda.jit
def softmax_kernel(x, y):
    ms = cuda.shared.array(MAX_THREADS, numba.float32)
    ds = cuda.shared.array(MAX_THREADS, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    n = cuda.blockDim.x
    cols = x.shape[1]

    m = numba.float32(NEG_INF)
    d = numba.float32(0.0)
    j = tid
    while j < cols:
        m, d = combine(m, d, x[row, j], numba.float32(1.0))
        j += n
    ms[tid] = m
    ds[tid] = d
    cuda.syncthreads()

    half = n // 2
    while half > 0:
        if tid < half:
            m, d = combine(ms[tid], ds[tid], ms[tid + half], ds[tid + half])
            ms[tid] = m
            ds[tid] = d
        cuda.syncthreads()
        half //= 2

    big_m = ms[0]
    total = ds[0]
    j = tid
    while j < cols:
        if total > 0:
            y[row, j] = math.exp(x[row, j] - big_m) / total
        else:
            y[row, j] = 0.0
        j += n


def softmax(x, y, threads: int) -> None:
    """Row softmax of the [rows, cols] float32 device array x into y."""
    softmax_kernel[x.shape[0], threads](x, y)
