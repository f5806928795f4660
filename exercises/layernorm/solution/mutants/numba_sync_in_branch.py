# mutant: the tree step's cuda.syncthreads() is inside `if tid < step:`; the threads that skip
# it run on and read partial[0] while the others still add (a divergent barrier: undefined
# behaviour on a GPU). Violates the README's barrier rule for block_sum.
"""LayerNorm and RMSNorm forward kernels in numba.cuda: one block per row, two passes.

Every thread of the row's block adds up its columns (tid, tid + threads, ...); the block
combines the partial sums in shared memory (a tree, a barrier after each step). Pass 1 gives
the mean, pass 2 the mean of squared deviations from it (never E[x^2] - E[x]^2), then every
thread writes its columns of y.
"""

import math

import numba
from numba import cuda

MAX_THREADS = 1024  # the shared array size; threads per block is a power of two <= this


@cuda.jit(device=True)
def block_sum(partial, value):
    """The sum of `value` over the block's threads, returned to every thread."""
    tid = cuda.threadIdx.x
    partial[tid] = value
    cuda.syncthreads()
    step = cuda.blockDim.x // 2
    while step > 0:
        if tid < step:
            partial[tid] += partial[tid + step]
            cuda.syncthreads()
        step //= 2
    total = partial[0]
    cuda.syncthreads()  # everyone has read partial[0] before the next block_sum overwrites it
    return total


@cuda.jit
def layer_norm_kernel(x, weight, bias, y, mean, rstd, eps):
    partial = cuda.shared.array(MAX_THREADS, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    d = x.shape[1]

    acc = numba.float32(0.0)
    for col in range(tid, d, cuda.blockDim.x):
        acc += x[row, col]
    mu = block_sum(partial, acc) / d

    acc = numba.float32(0.0)
    for col in range(tid, d, cuda.blockDim.x):
        dev = x[row, col] - mu
        acc += dev * dev
    var = block_sum(partial, acc) / d
    r = numba.float32(1.0) / math.sqrt(var + eps)

    for col in range(tid, d, cuda.blockDim.x):
        y[row, col] = (x[row, col] - mu) * r * weight[col] + bias[col]
    if tid == 0:
        mean[row] = mu
        rstd[row] = r


@cuda.jit
def rms_norm_kernel(x, weight, y, rstd, eps):
    partial = cuda.shared.array(MAX_THREADS, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    d = x.shape[1]

    acc = numba.float32(0.0)
    for col in range(tid, d, cuda.blockDim.x):
        acc += x[row, col] * x[row, col]
    r = numba.float32(1.0) / math.sqrt(block_sum(partial, acc) / d + eps)

    for col in range(tid, d, cuda.blockDim.x):
        y[row, col] = x[row, col] * r * weight[col]
    if tid == 0:
        rstd[row] = r


def layer_norm_forward(x, weight, bias, y, mean, rstd, eps: float, threads: int) -> None:
    """LayerNorm of every row of the float32 device array x [rows, D] into y, mean, rstd."""
    layer_norm_kernel[x.shape[0], threads](x, weight, bias, y, mean, rstd, eps)


def rms_norm_forward(x, weight, y, rstd, eps: float, threads: int) -> None:
    """RMSNorm of every row of the float32 device array x [rows, D] into y and rstd."""
    rms_norm_kernel[x.shape[0], threads](x, weight, y, rstd, eps)
