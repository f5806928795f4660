# alternative: two passes, each a warp-shuffle butterfly plus one shared slot per warp
"""LayerNorm / RMSNorm forward in numba.cuda, one block per row, reductions with shuffles.

A block-wide sum: every warp adds its 32 values with shfl_xor_sync (after offsets 16, 8, 4,
2, 1 every lane holds the warp's total), lane 0 of each warp stores it in shared memory, and
every thread then adds the per-warp totals. The mean comes first, then the sum of squared
deviations from it.
"""

import math

import numba
from numba import cuda

FULL_MASK = 0xFFFFFFFF
MAX_WARPS = 32  # 1024 threads


@cuda.jit(device=True)
def warp_sum(value):
    offset = 16
    while offset > 0:
        value += cuda.shfl_xor_sync(FULL_MASK, value, offset)
        offset //= 2
    return value


@cuda.jit(device=True)
def block_sum(per_warp, value):
    tid = cuda.threadIdx.x
    total = warp_sum(value)
    if tid % 32 == 0:
        per_warp[tid // 32] = total
    cuda.syncthreads()
    result = numba.float32(0.0)
    for w in range(cuda.blockDim.x // 32):
        result += per_warp[w]
    cuda.syncthreads()  # per_warp is reused by the next call
    return result


@cuda.jit
def layer_norm_kernel(x, weight, bias, y, mean, rstd, eps):
    per_warp = cuda.shared.array(MAX_WARPS, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    stride = cuda.blockDim.x
    d = x.shape[1]
    s = numba.float32(0.0)
    for col in range(tid, d, stride):
        s += x[row, col]
    mu = block_sum(per_warp, s) / d
    q = numba.float32(0.0)
    for col in range(tid, d, stride):
        t = x[row, col] - mu
        q += t * t
    r = numba.float32(1.0) / math.sqrt(block_sum(per_warp, q) / d + eps)
    for col in range(tid, d, stride):
        y[row, col] = (x[row, col] - mu) * r * weight[col] + bias[col]
    if tid == 0:
        mean[row] = mu
        rstd[row] = r


@cuda.jit
def rms_norm_kernel(x, weight, y, rstd, eps):
    per_warp = cuda.shared.array(MAX_WARPS, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    stride = cuda.blockDim.x
    d = x.shape[1]
    q = numba.float32(0.0)
    for col in range(tid, d, stride):
        q += x[row, col] * x[row, col]
    r = numba.float32(1.0) / math.sqrt(block_sum(per_warp, q) / d + eps)
    for col in range(tid, d, stride):
        y[row, col] = x[row, col] * r * weight[col]
    if tid == 0:
        rstd[row] = r


def layer_norm_forward(x, weight, bias, y, mean, rstd, eps, threads):
    layer_norm_kernel[x.shape[0], threads](x, weight, bias, y, mean, rstd, eps)


def rms_norm_forward(x, weight, y, rstd, eps, threads):
    rms_norm_kernel[x.shape[0], threads](x, weight, y, rstd, eps)
