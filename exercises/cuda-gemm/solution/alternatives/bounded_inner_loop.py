# alternative: no zero-fill: the inner loop stops at K and threads outside C skip the math
"""Tiled GEMM where out-of-range tile slots are simply never read.

Instead of storing 0.0 for elements outside the matrices, every thread limits the inner loop
to the k values that exist (min(tile, K - k0)) and threads outside C skip the products; the
two barriers stay where every thread of the block reaches them.
"""

import numba
from numba import cuda

MAX_TILE = 32


@cuda.jit
def tiled_kernel(A, B, C, M, N, K):
    sa = cuda.shared.array((MAX_TILE, MAX_TILE), numba.float32)
    sb = cuda.shared.array((MAX_TILE, MAX_TILE), numba.float32)
    col, row = cuda.grid(2)
    tile = cuda.blockDim.x
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    inside = row < M and col < N
    total = numba.float32(0.0)
    k0 = 0
    while k0 < K:
        if row < M and k0 + tx < K:
            sa[ty, tx] = A[row, k0 + tx]
        if k0 + ty < K and col < N:
            sb[ty, tx] = B[k0 + ty, col]
        cuda.syncthreads()
        if inside:
            for kk in range(min(tile, K - k0)):
                total += sa[ty, kk] * sb[kk, tx]
        cuda.syncthreads()
        k0 += tile
    if inside:
        C[row, col] = total


def gemm(A, B, C, tile: int) -> None:
    """C = A @ B with blocks of tile x tile threads."""
    rows, inner = A.shape
    cols = B.shape[1]
    blocks = (-(-cols // tile), -(-rows // tile))
    tiled_kernel[blocks, (tile, tile)](A, B, C, rows, cols, inner)
