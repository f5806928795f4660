# mutant: the warp shuffle starts at offset 32 instead of 16 (shfl_down by 32 returns the lane's own value, which is added twice)
"""Sum of a float32 array on the GPU with numba.cuda, in two passes.

Pass 1: a fixed grid of `blocks` x `threads` threads; every thread adds up its elements with a
grid-stride loop, the block combines its threads' sums (shared-memory tree down to one warp,
then warp shuffles) and writes one partial sum per block. Pass 2: the same kernel, one
block, over the partial sums. No atomics, so the result is the same bits on every run.
"""

import numba
import numpy as np
from numba import cuda

MAX_THREADS = 1024  # the shared array size; threads per block is a power of two <= this
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def block_sum(x, out, n):
    """out[blockIdx.x] = sum of the elements of x[:n] that this block's threads visit."""
    partial = cuda.shared.array(MAX_THREADS, numba.float32)
    tid = cuda.threadIdx.x

    # 1. grid-stride loop: any n, any grid size; four independent loads in flight per
    #    thread (four accumulators) so that memory latency is hidden
    acc0 = numba.float32(0.0)
    acc1 = numba.float32(0.0)
    acc2 = numba.float32(0.0)
    acc3 = numba.float32(0.0)
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i + 3 * stride < n:
        acc0 += x[i]
        acc1 += x[i + stride]
        acc2 += x[i + 2 * stride]
        acc3 += x[i + 3 * stride]
        i += 4 * stride
    while i < n:
        acc0 += x[i]
        i += stride
    partial[tid] = (acc0 + acc1) + (acc2 + acc3)
    cuda.syncthreads()

    # 2. shared-memory tree down to 32 values; a barrier after every step
    step = cuda.blockDim.x // 2
    while step >= 32:
        if tid < step:
            partial[tid] += partial[tid + step]
        cuda.syncthreads()
        step //= 2

    # 3. the first warp finishes with shuffles (lanes 16..31 fold onto 0..15, and so on)
    if tid < 32:
        value = partial[tid]
        offset = cuda.warpsize
        while offset > 0:
            value += cuda.shfl_down_sync(FULL_MASK, value, offset)
            offset //= 2
        if tid == 0:
            out[cuda.blockIdx.x] = value


def reduce_sum(x, blocks: int, threads: int) -> float:
    """Sum of the 1-D float32 device array `x`, launched as `blocks` x `threads`.

    `threads` is a power of two in [32, 1024]; `blocks` >= 1.
    """
    n = x.shape[0]
    partials = cuda.device_array(blocks, dtype=np.float32)
    block_sum[blocks, threads](x, partials, n)
    result = cuda.device_array(1, dtype=np.float32)
    second = min(MAX_THREADS, max(32, 1 << (blocks - 1).bit_length()))
    block_sum[1, second](partials, result, blocks)
    return float(result.copy_to_host()[0])
