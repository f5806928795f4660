# alternative: cuda.grid(2), B tile stored transposed in shared memory, zero padding via ternaries
import numba
from numba import cuda


@cuda.jit
def mm(A, B, C):
    As = cuda.shared.array((32, 32), numba.float32)
    Bt = cuda.shared.array((32, 32), numba.float32)
    col, row = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tile = cuda.blockDim.x
    M = A.shape[0]
    K = A.shape[1]
    N = B.shape[1]
    acc = numba.float32(0.0)
    for k0 in range(0, K, tile):
        As[ty, tx] = A[row, k0 + tx] if (row < M and k0 + tx < K) else 0.0
        Bt[tx, ty] = B[k0 + ty, col] if (k0 + ty < K and col < N) else 0.0
        cuda.syncthreads()
        for kk in range(tile):
            acc += As[ty, kk] * Bt[tx, kk]
        cuda.syncthreads()
    if row < M and col < N:
        C[row, col] = acc


def gemm(A, B, C, tile: int) -> None:
    M = A.shape[0]
    N = B.shape[1]
    bx = -(-N // tile)
    by = -(-M // tile)
    mm[(bx, by), (tile, tile)](A, B, C)
