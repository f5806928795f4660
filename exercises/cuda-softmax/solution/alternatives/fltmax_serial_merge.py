# alternative: m starts at -FLT_MAX, branchy update, xor shuffles, thread 0 merges the warps
# serially, rows with D == 0 written as zeros
import math

import numba
from numba import cuda

NEG_BIG = -3.4028234663852886e38  # -FLT_MAX


@cuda.jit
def kern(x, y):
    wm = cuda.shared.array(32, numba.float32)
    wd = cuda.shared.array(32, numba.float32)
    fin = cuda.shared.array(2, numba.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    bs = cuda.blockDim.x
    n = x.shape[1]
    m = NEG_BIG
    d = 0.0
    j = t
    while j < n:
        v = x[r, j]
        if v > m:
            d = d * math.exp(m - v) + 1.0
            m = v
        else:
            d += math.exp(v - m)
        j += bs
    off = 16
    while off >= 1:
        m2 = cuda.shfl_xor_sync(0xFFFFFFFF, m, off)
        d2 = cuda.shfl_xor_sync(0xFFFFFFFF, d, off)
        mm = max(m, m2)
        d = d * math.exp(m - mm) + d2 * math.exp(m2 - mm)
        m = mm
        off = off // 2
    if t % 32 == 0:
        wm[t // 32] = m
        wd[t // 32] = d
    cuda.syncthreads()
    if t == 0:
        M = wm[0]
        D = wd[0]
        for w in range(1, bs // 32):
            m2 = wm[w]
            d2 = wd[w]
            mm = max(M, m2)
            D = D * math.exp(M - mm) + d2 * math.exp(m2 - mm)
            M = mm
        fin[0] = M
        fin[1] = D
    cuda.syncthreads()
    M = fin[0]
    D = fin[1]
    j = t
    while j < n:
        xv = x[r, j]
        y[r, j] = 0.0 if D == 0.0 else math.exp(xv - M) / D
        j += bs


def softmax(x, y, threads: int) -> None:
    kern[x.shape[0], threads](x, y)
