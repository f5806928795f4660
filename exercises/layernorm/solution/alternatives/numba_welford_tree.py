# alternative: per-thread Welford (count, mean, M2) merged in a shared-memory tree (Chan)
"""LayerNorm / RMSNorm forward in numba.cuda, one block per row, statistics in one pass.

Each thread runs Welford's update over its columns (tid, tid + threads, ...), keeping a count,
a running mean and M2, the sum of squared deviations from that mean. The block then merges
the threads' triples pairwise in shared memory with the update of Chan, Golub and LeVeque:
delta = mean_b - mean_a, n = n_a + n_b, mean = mean_a + delta * n_b / n,
M2 = M2_a + M2_b + delta^2 * n_a * n_b / n. Threads with no column hold n = 0.
"""

import math

import numba
from numba import cuda

MAX_THREADS = 1024


@cuda.jit
def layer_norm_kernel(x, weight, bias, y, mean, rstd, eps):
    counts = cuda.shared.array(MAX_THREADS, numba.float32)
    means = cuda.shared.array(MAX_THREADS, numba.float32)
    m2s = cuda.shared.array(MAX_THREADS, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    d = x.shape[1]

    n = numba.float32(0.0)
    mu = numba.float32(0.0)
    m2 = numba.float32(0.0)
    col = tid
    while col < d:
        v = x[row, col]
        n += numba.float32(1.0)
        delta = v - mu
        mu += delta / n
        m2 += delta * (v - mu)
        col += threads
    counts[tid] = n
    means[tid] = mu
    m2s[tid] = m2
    cuda.syncthreads()

    step = threads // 2
    while step > 0:
        if tid < step:
            n_a = counts[tid]
            n_b = counts[tid + step]
            total = n_a + n_b
            if n_b > 0:
                delta = means[tid + step] - means[tid]
                means[tid] = means[tid] + delta * (n_b / total)
                m2s[tid] = m2s[tid] + m2s[tid + step] + delta * delta * (n_a * n_b / total)
                counts[tid] = total
        cuda.syncthreads()
        step //= 2

    mu = means[0]
    r = numba.float32(1.0) / math.sqrt(m2s[0] / d + eps)
    col = tid
    while col < d:
        y[row, col] = (x[row, col] - mu) * r * weight[col] + bias[col]
        col += threads
    if tid == 0:
        mean[row] = mu
        rstd[row] = r


@cuda.jit
def rms_norm_kernel(x, weight, y, rstd, eps):
    sums = cuda.shared.array(MAX_THREADS, numba.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    d = x.shape[1]
    acc = numba.float32(0.0)
    col = tid
    while col < d:
        acc += x[row, col] * x[row, col]
        col += threads
    sums[tid] = acc
    cuda.syncthreads()
    step = threads // 2
    while step > 0:
        if tid < step:
            sums[tid] += sums[tid + step]
        cuda.syncthreads()
        step //= 2
    r = numba.float32(1.0) / math.sqrt(sums[0] / d + eps)
    col = tid
    while col < d:
        y[row, col] = x[row, col] * r * weight[col]
        col += threads
    if tid == 0:
        rstd[row] = r


def layer_norm_forward(x, weight, bias, y, mean, rstd, eps, threads):
    layer_norm_kernel[x.shape[0], threads](x, weight, bias, y, mean, rstd, eps)


def rms_norm_forward(x, weight, y, rstd, eps, threads):
    rms_norm_kernel[x.shape[0], threads](x, weight, y, rstd, eps)
