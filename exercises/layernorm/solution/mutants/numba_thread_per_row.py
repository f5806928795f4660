# mutant: one thread per row (each thread loops over the whole row), not one block per row
"""LayerNorm and RMSNorm forward kernels in numba.cuda: a thread per row, two passes."""

import math

import numba
from numba import cuda


@cuda.jit
def layer_norm_kernel(x, weight, bias, y, mean, rstd, eps):
    row = cuda.grid(1)
    if row >= x.shape[0]:
        return
    d = x.shape[1]
    acc = numba.float32(0.0)
    for col in range(d):
        acc += x[row, col]
    mu = acc / d
    acc = numba.float32(0.0)
    for col in range(d):
        dev = x[row, col] - mu
        acc += dev * dev
    r = numba.float32(1.0) / math.sqrt(acc / d + eps)
    for col in range(d):
        y[row, col] = (x[row, col] - mu) * r * weight[col] + bias[col]
    mean[row] = mu
    rstd[row] = r


@cuda.jit
def rms_norm_kernel(x, weight, y, rstd, eps):
    row = cuda.grid(1)
    if row >= x.shape[0]:
        return
    d = x.shape[1]
    acc = numba.float32(0.0)
    for col in range(d):
        acc += x[row, col] * x[row, col]
    r = numba.float32(1.0) / math.sqrt(acc / d + eps)
    for col in range(d):
        y[row, col] = x[row, col] * r * weight[col]
    rstd[row] = r


def layer_norm_forward(x, weight, bias, y, mean, rstd, eps: float, threads: int) -> None:
    rows = x.shape[0]
    layer_norm_kernel[(rows + threads - 1) // threads, threads](x, weight, bias, y, mean, rstd, eps)


def rms_norm_forward(x, weight, y, rstd, eps: float, threads: int) -> None:
    rows = x.shape[0]
    rms_norm_kernel[(rows + threads - 1) // threads, threads](x, weight, y, rstd, eps)
