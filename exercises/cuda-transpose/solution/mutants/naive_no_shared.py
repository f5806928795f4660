# mutant: a naive transpose without shared memory: reads are coalesced, the writes to out stride by rows
import numba  # noqa: F401
from numba import cuda

TILE = 32
BLOCK_ROWS = 8


@cuda.jit
def transpose_kernel(x, out):
    rows, cols = x.shape
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    for j in range(cuda.threadIdx.y, TILE, BLOCK_ROWS):
        row = cuda.blockIdx.y * TILE + j
        if row < rows and col < cols:
            out[col, row] = x[row, col]


def transpose(x, out) -> None:
    rows, cols = x.shape
    grid = ((cols + TILE - 1) // TILE, (rows + TILE - 1) // TILE)
    transpose_kernel[grid, (TILE, BLOCK_ROWS)](x, out)
