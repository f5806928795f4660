# mutant: adds 0.0 on the way, so -0.0 comes out as 0.0 (blind solver)
import numba
from numba import cuda

TILE = 32
BLOCK_ROWS = 8


@cuda.jit
def transpose_kernel(x, out):
    tile = cuda.shared.array((TILE, TILE + 1), numba.float32)
    rows, cols = x.shape
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bx = cuda.blockIdx.x
    by = cuda.blockIdx.y
    for j in range(ty, TILE, BLOCK_ROWS):
        r = by * TILE + j
        c = bx * TILE + tx
        if r < rows and c < cols:
            tile[j, tx] = x[r, c] + numba.float32(0.0)
    cuda.syncthreads()
    for j in range(ty, TILE, BLOCK_ROWS):
        orow = bx * TILE + j
        ocol = by * TILE + tx
        if orow < cols and ocol < rows:
            out[orow, ocol] = tile[tx, j]


def transpose(x, out) -> None:
    rows, cols = x.shape
    grid = ((cols + TILE - 1) // TILE, (rows + TILE - 1) // TILE)
    transpose_kernel[grid, (TILE, BLOCK_ROWS)](x, out)
