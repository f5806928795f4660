"""layernorm, numba track: LayerNorm and RMSNorm forward kernels, one block per row.

Grade with:  quizzer exercise layernorm --check --track numba
Without a GPU the kernels run in the numba-cuda simulator (every CUDA thread is a Python
thread), so keep to the features listed in the README.
"""

import math

import numba
from numba import cuda

MAX_THREADS = 1024  # threads per block is a power of two in [32, 1024]


@cuda.jit
def layer_norm_kernel(x, weight, bias, y, mean, rstd, eps):
    """Block `blockIdx.x` normalises row `blockIdx.x` of x [rows, D]."""
    partial = cuda.shared.array(MAX_THREADS, numba.float32)  # one slot per thread
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    d = x.shape[1]
    # TODO 1: each thread adds up x[row, col] for col = tid, tid + blockDim.x, ... (col < d);
    #         combine the block's partial sums in `partial` (cuda.syncthreads() between
    #         steps) and divide by d: the mean, seen by every thread
    # TODO 2: the same for (x - mean)^2: the biased variance; never E[x^2] - mean^2
    # TODO 3: r = 1 / sqrt(var + eps); write y[row, col] for the thread's columns, and
    #         mean[row], rstd[row] from one thread
    #         (math.sqrt works in kernels)


@cuda.jit
def rms_norm_kernel(x, weight, y, rstd, eps):
    """Block `blockIdx.x` computes y = x * rstd * weight for row `blockIdx.x`."""
    # TODO: rstd = 1 / sqrt(mean(x^2) + eps) over the row (a block-wide sum), then y;
    #       one thread writes rstd[row]


def layer_norm_forward(x, weight, bias, y, mean, rstd, eps: float, threads: int) -> None:
    """LayerNorm of each row of the float32 device array x [rows, D] (do not modify it).

    weight, bias [D]; writes y [rows, D], mean [rows], rstd [rows] (float32 device arrays).
    Launch one block per row: layer_norm_kernel[rows, threads](...), threads a power of two.
    """
    raise NotImplementedError("not implemented: layer_norm_forward (numba track)")


def rms_norm_forward(x, weight, y, rstd, eps: float, threads: int) -> None:
    """RMSNorm of each row of x [rows, D] into y [rows, D] and rstd [rows]; one block per row."""
    raise NotImplementedError("not implemented: rms_norm_forward (numba track)")
