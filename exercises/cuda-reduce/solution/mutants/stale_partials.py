# mutant: partial-sum buffer cached between calls and pass 2 reduces the whole cached
# buffer (partials.size) instead of the `blocks` entries this call wrote: after a call with
# more blocks, a call with fewer blocks adds stale partial sums of the earlier input. State leaked
# between calls; violates README "reduce the partials" (the B partial sums of this call) / "return
# the sum".

import numba
import numpy as np
from numba import cuda

MAX_THREADS = 1024
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def block_sum(x, out, n):
    partial = cuda.shared.array(MAX_THREADS, numba.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = numba.float32(0.0)
    while i < n:
        acc += x[i]
        i += stride
    partial[tid] = acc
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s >= 32:
        if tid < s:
            partial[tid] += partial[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid < 32:
        v = partial[tid]
        o = 16
        while o > 0:
            v += cuda.shfl_down_sync(FULL_MASK, v, o)
            o //= 2
        if tid == 0:
            out[cuda.blockIdx.x] = v


_cache = {}


def reduce_sum(x, blocks: int, threads: int) -> float:
    n = x.shape[0]
    # allocate once and reuse (grown when a call needs more blocks)
    if "p" not in _cache or _cache["p"].size < blocks:
        _cache["p"] = cuda.to_device(np.zeros(blocks, dtype=np.float32))
        _cache["o"] = cuda.device_array(1, dtype=np.float32)
    partials, out = _cache["p"], _cache["o"]
    block_sum[blocks, threads](x, partials, n)
    block_sum[1, threads](partials, out, partials.size)   # BUG: should be `blocks`
    return float(out.copy_to_host()[0])
