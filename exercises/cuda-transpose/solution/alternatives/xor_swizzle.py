# alternative: an unpadded TILE x TILE tile with an XOR swizzle of the column, an unrolled loop
"""cuda-transpose, numba track: out = x.T with an XOR-swizzled shared-memory tile.

Element (r, c) of the tile is kept in column c ^ r of row r. Along a row (the store) the
columns c ^ r are a permutation of 0..31; along a column (the read-back, rows r = 0..31 at
fixed c) the words r * 32 + (c ^ r) fall in banks c ^ r, again all 32 different.
"""

import numba
from numba import cuda

TILE = 32
BLOCK_ROWS = 8
STEPS = TILE // BLOCK_ROWS


@cuda.jit
def transpose_kernel(x, out):
    tile = cuda.shared.array((TILE, TILE), numba.float32)
    n_rows = x.shape[0]
    n_cols = x.shape[1]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    base_r = cuda.blockIdx.y * TILE
    base_c = cuda.blockIdx.x * TILE

    for step in range(STEPS):
        r = ty + step * BLOCK_ROWS  # row of the tile
        if base_r + r < n_rows and base_c + tx < n_cols:
            tile[r, tx ^ r] = x[base_r + r, base_c + tx]

    cuda.syncthreads()

    for step in range(STEPS):
        c = ty + step * BLOCK_ROWS  # column of the tile = row of this block's part of out
        if base_c + c < n_cols and base_r + tx < n_rows:
            out[base_c + c, base_r + tx] = tile[tx, c ^ tx]


def transpose(x, out) -> None:
    """Write x.T into out (x: [rows, cols] float32 device array, out: [cols, rows])."""
    blocks_x = -(-x.shape[1] // TILE)
    blocks_y = -(-x.shape[0] // TILE)
    transpose_kernel[(blocks_x, blocks_y), (TILE, BLOCK_ROWS)](x, out)
