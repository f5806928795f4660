# mutant: the naive kernel: every thread reads its row of A and column of B from global memory
import numba
from numba import cuda


@cuda.jit
def gemm_kernel(A, B, C, M, N, K):
    """C[row, col] = A[row, :] @ B[:, col], straight from global memory."""
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < M and col < N:
        acc = numba.float32(0.0)
        for k in range(K):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def gemm(A, B, C, tile: int) -> None:
    M, K = A.shape
    N = B.shape[1]
    grid = ((N + tile - 1) // tile, (M + tile - 1) // tile)
    gemm_kernel[grid, (tile, tile)](A, B, C, M, N, K)
