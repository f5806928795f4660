# alternative: one flat shared buffer holding both tiles, a counted loop over the k-tiles
"""Tiled GEMM with a single 1-D shared array: the A tile in its first tile*tile floats, the
B tile after it, addressed as row * tile + col. The number of k-tiles is computed up front
and the loads use conditional expressions."""

import numba
from numba import cuda

SHARED = 2 * 32 * 32  # both tiles at the largest tile size


@cuda.jit
def kernel(A, B, C, M, N, K):
    smem = cuda.shared.array(SHARED, numba.float32)
    t = cuda.blockDim.x
    x = cuda.threadIdx.x
    y = cuda.threadIdx.y
    i = cuda.blockIdx.y * t + y
    j = cuda.blockIdx.x * t + x
    b_off = t * t
    s = numba.float32(0.0)
    steps = (K + t - 1) // t
    for step in range(steps):
        ka = step * t + x
        kb = step * t + y
        smem[y * t + x] = A[i, ka] if (i < M and ka < K) else numba.float32(0.0)
        smem[b_off + y * t + x] = B[kb, j] if (kb < K and j < N) else numba.float32(0.0)
        cuda.syncthreads()
        for q in range(t):
            s += smem[y * t + q] * smem[b_off + q * t + x]
        cuda.syncthreads()
    if i < M and j < N:
        C[i, j] = s


def gemm(A, B, C, tile: int) -> None:
    """Write A @ B into C; one block of tile x tile threads per tile of C."""
    m, n = C.shape
    k = A.shape[1]
    kernel[((n + tile - 1) // tile, (m + tile - 1) // tile), (tile, tile)](A, B, C, m, n, k)
