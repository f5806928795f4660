"""cuda-reduce, numba track: sum a float32 array on the GPU.

Grade with:  quizzer exercise cuda-reduce --check --track numba
Without a GPU the kernel runs in the numba-cuda simulator (every CUDA thread is a Python
thread), so keep to the features listed in the README.
"""

import numba
import numpy as np
from numba import cuda

MAX_THREADS = 1024  # threads per block is a power of two in [32, 1024]
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def block_sum(x, out, n):
    """Write the sum of the elements of x[:n] visited by this block to out[blockIdx.x]."""
    partial = cuda.shared.array(MAX_THREADS, numba.float32)  # one slot per thread
    tid = cuda.threadIdx.x
    # TODO 1: each thread adds up x[i], x[i + gridsize], ... (a grid-stride loop, i < n)
    # TODO 2: store the thread's sum in partial[tid]; reduce the block's values in shared
    #         memory, with cuda.syncthreads() where threads read what others wrote
    # TODO 3: finish the last 32 values with cuda.shfl_down_sync(FULL_MASK, value, offset)
    # TODO 4: thread 0 writes the block's sum to out[cuda.blockIdx.x]
    if tid == 0:
        out[cuda.blockIdx.x] = partial[0]


def reduce_sum(x, blocks: int, threads: int) -> float:
    """Sum of the 1-D float32 device array `x` (do not modify it).

    Launch `blocks` x `threads` (threads: a power of two in [32, 1024]) for the first pass,
    reduce the partial sums on the GPU, and return the total as a Python float.
    """
    n = x.shape[0]
    partials = cuda.device_array(blocks, dtype=np.float32)  # one sum per block
    # TODO: block_sum[blocks, threads](x, partials, n), then a second pass over `partials`
    raise NotImplementedError(f"reduce_sum (n={n}, {partials.size} partial sums)")
