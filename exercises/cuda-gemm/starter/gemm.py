"""cuda-gemm, numba track: C = A @ B with a tiled shared-memory kernel.

Grade with:  quizzer exercise cuda-gemm --check --track numba
Without a GPU the kernel runs in the numba-cuda simulator (every CUDA thread is a Python
thread), so keep to the features listed in the README.
"""

import numba
from numba import cuda

MAX_TILE = 32  # size the shared arrays for the largest tile; a block uses tile x tile


@cuda.jit
def gemm_kernel(A, B, C, M, N, K):
    """C[row, col] = sum over k of A[row, k] * B[k, col] for this thread's (row, col)."""
    a_tile = cuda.shared.array((MAX_TILE, MAX_TILE), numba.float32)
    b_tile = cuda.shared.array((MAX_TILE, MAX_TILE), numba.float32)
    tile = cuda.blockDim.x
    tx = cuda.threadIdx.x  # column inside the tile
    ty = cuda.threadIdx.y  # row inside the tile
    acc = numba.float32(0.0)
    # TODO 1: row and col of this thread's element of C (blockIdx.y: row tiles, x: columns)
    # TODO 2: for each k-tile k0 = 0, tile, 2 * tile, ...: load a_tile[ty, tx] and
    #         b_tile[ty, tx] (0.0 outside the matrices), cuda.syncthreads(), add the products
    #         of row ty of a_tile and column tx of b_tile to acc, cuda.syncthreads()
    # TODO 3: write acc to C[row, col] if the element is inside C
    raise NotImplementedError("not implemented: gemm_kernel")


def gemm(A, B, C, tile: int) -> None:
    """Write A @ B into C (float32 device arrays [M, K], [K, N], [M, N]).

    Launch blocks of tile x tile threads (tile: a power of two, 4 to 32), one per tile of C.
    """
    M, K = A.shape
    N = B.shape[1]
    # TODO: gemm_kernel[grid, (tile, tile)](A, B, C, M, N, K) with enough blocks for all of C
    raise NotImplementedError(f"not implemented: gemm (M={M}, N={N}, K={K}, tile={tile})")
