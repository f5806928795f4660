# mutant: ignores the tile argument and always launches 8 x 8 blocks (right only when tile is 8)
import numba
from numba import cuda

MAX_TILE = 32


@cuda.jit
def gemm_kernel(A, B, C, M, N, K):
    a_tile = cuda.shared.array((MAX_TILE, MAX_TILE), numba.float32)
    b_tile = cuda.shared.array((MAX_TILE, MAX_TILE), numba.float32)
    tile = cuda.blockDim.x
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * tile + ty
    col = cuda.blockIdx.x * tile + tx
    acc = numba.float32(0.0)
    nsteps = (K + tile - 1) // tile
    for t in range(nsteps):
        k0 = t * tile
        ka = k0 + tx
        if row < M and ka < K:
            a_tile[ty, tx] = A[row, ka]
        else:
            a_tile[ty, tx] = 0.0
        kb = k0 + ty
        if kb < K and col < N:
            b_tile[ty, tx] = B[kb, col]
        else:
            b_tile[ty, tx] = 0.0
        cuda.syncthreads()
        for kk in range(tile):
            acc += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
    if row < M and col < N:
        C[row, col] = acc


def gemm(A, B, C, tile: int) -> None:
    M, K = A.shape
    N = B.shape[1]
    tile = 8
    grid = ((N + tile - 1) // tile, (M + tile - 1) // tile)
    gemm_kernel[grid, (tile, tile)](A, B, C, M, N, K)
