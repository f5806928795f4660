# mutant: no bounds checks: the partial tiles at the right and bottom edges read and write outside the matrix
import numba
from numba import cuda

TILE = 32  # the tile is TILE x TILE elements
BLOCK_ROWS = 8  # blockDim = (TILE, BLOCK_ROWS): each thread moves TILE // BLOCK_ROWS elements


@cuda.jit
def transpose_kernel(x, out):
    tile = cuda.shared.array((TILE, TILE + 1), numba.float32)
    rows, cols = x.shape
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    first_row = cuda.blockIdx.y * TILE  # this block's tile: x[first_row:, first_col:]
    first_col = cuda.blockIdx.x * TILE

    col = first_col + tx
    for j in range(ty, TILE, BLOCK_ROWS):
        row = first_row + j
        tile[j, tx] = x[row, col]
    cuda.syncthreads()

    # the same tile lands at out[first_col:, first_row:]; thread tx writes column tx of it
    out_col = first_row + tx
    for j in range(ty, TILE, BLOCK_ROWS):
        out_row = first_col + j
        out[out_row, out_col] = tile[tx, j]


def transpose(x, out) -> None:
    """Write x.T into out: x is a [rows, cols] float32 device array, out a [cols, rows] one."""
    rows, cols = x.shape
    grid = ((cols + TILE - 1) // TILE, (rows + TILE - 1) // TILE)
    transpose_kernel[grid, (TILE, BLOCK_ROWS)](x, out)
