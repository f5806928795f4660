# mutant: grid size by integer division (N // tile, M // tile): the partial tiles at the edges get no block
import numba
from numba import cuda

MAX_TILE = 32  # shared arrays are sized for the largest tile; a block uses tile x tile of them


@cuda.jit
def gemm_kernel(A, B, C, M, N, K):
    """C[row, col] = sum over k of A[row, k] * B[k, col] for this thread's (row, col)."""
    a_tile = cuda.shared.array((MAX_TILE, MAX_TILE), numba.float32)
    b_tile = cuda.shared.array((MAX_TILE, MAX_TILE), numba.float32)
    tile = cuda.blockDim.x
    tx = cuda.threadIdx.x  # column inside the tile: neighbouring threads, neighbouring columns
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * tile + ty
    col = cuda.blockIdx.x * tile + tx

    acc = numba.float32(0.0)
    for k0 in range(0, K, tile):
        # every thread loads one element of each tile
        k = k0 + tx
        if row < M and k < K:
            a_tile[ty, tx] = A[row, k]
        else:
            a_tile[ty, tx] = 0.0
        k = k0 + ty
        if k < K and col < N:
            b_tile[ty, tx] = B[k, col]
        else:
            b_tile[ty, tx] = 0.0
        cuda.syncthreads()  # both tiles complete before anyone reads them

        for kk in range(tile):
            acc += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()  # everyone done reading before the next load overwrites them

    if row < M and col < N:
        C[row, col] = acc


def gemm(A, B, C, tile: int) -> None:
    """Write A @ B into C (float32 device arrays [M, K], [K, N], [M, N]).

    Launches blocks of tile x tile threads (tile a power of two, 4 to 32), one per tile of C.
    """
    M, K = A.shape
    N = B.shape[1]
    grid = (N // tile, M // tile)  # x: column tiles, y: row tiles
    gemm_kernel[grid, (tile, tile)](A, B, C, M, N, K)
