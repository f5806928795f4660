"""cuda-softmax, numba track: row softmax of a float32 matrix on the GPU.

Grade with:  quizzer exercise cuda-softmax --check --track numba
Without a GPU the kernel runs in the numba-cuda simulator (every CUDA thread is a Python
thread), so keep to the features listed in the README.
"""

import math

import numba
from numba import cuda

FULL_MASK = 0xFFFFFFFF
MAX_WARPS = 32  # 1024 threads per block at most
NEG_INF = -math.inf


@cuda.jit(device=True)
def merge(m_a, d_a, m_b, d_b):
    """The (max, sum) state of the union of two parts of a row: (m, d)."""
    # TODO: m = max(m_a, m_b); rescale both sums to m. If m is -inf, return (m, 0).
    return m_a, d_a


@cuda.jit
def softmax_kernel(x, y):
    """Block cuda.blockIdx.x computes y[row, :] = softmax(x[row, :])."""
    warp_m = cuda.shared.array(MAX_WARPS, numba.float32)  # one (m, d) state per warp
    warp_d = cuda.shared.array(MAX_WARPS, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    # TODO 1: one pass over j = tid, tid + blockDim.x, ... < cols: running max m and running
    #         sum d of exp(x - m), d rescaled by exp(m_old - m_new) when the max grows
    # TODO 2: merge the states of each warp with cuda.shfl_down_sync (offsets 16, 8, 4, 2, 1),
    #         then the warps' states through shared memory (cuda.syncthreads() in between)
    # TODO 3: write y[row, j] = exp(x[row, j] - M) / D; a row of only -inf gets zeros
    if tid == 0:
        warp_m[0] = 0.0
        warp_d[0] = 0.0
        y[row, 0] = x[row, 0]


def softmax(x, y, threads: int) -> None:
    """y[r, :] = softmax(x[r, :]) for the float32 device arrays x, y of shape [rows, cols].

    Launch one block of `threads` threads (a power of two, 32 to 1024) per row; write only y.
    """
    rows, cols = x.shape
    # TODO: softmax_kernel[rows, threads](x, y)
    raise NotImplementedError(f"not implemented: softmax (rows={rows}, cols={cols})")
