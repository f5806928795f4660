# alternative: each thread loads 4 adjacent tile rows, a rotated tile layout (blind solver)
"""Unusual but legal: each thread loads 4 *adjacent* tile rows (j = 4*ty + k) instead of the
strided j = ty + 8k (consecutive tx still read consecutive floats of a row), and the tile is
skewed by a rotation, element (r, c) at tile[r, (c + r) % TILE]: a column of the tile then
covers all 32 banks, like padding (README step 5's reasoning, a third layout)."""

import numba
from numba import cuda

TILE = 32
BLOCK_ROWS = 8
PER = TILE // BLOCK_ROWS


@cuda.jit
def kern(x, out):
    tile = cuda.shared.array((TILE, TILE), numba.float32)
    rows, cols = x.shape
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    r0 = cuda.blockIdx.y * TILE
    c0 = cuda.blockIdx.x * TILE
    for k in range(PER):
        j = ty * PER + k
        if r0 + j < rows and c0 + tx < cols:
            tile[j, (tx + j) % TILE] = x[r0 + j, c0 + tx]
    cuda.syncthreads()
    for k in range(PER):
        j = ty * PER + k
        if c0 + j < cols and r0 + tx < rows:
            out[c0 + j, r0 + tx] = tile[tx, (j + tx) % TILE]


def transpose(x, out) -> None:
    rows, cols = x.shape
    kern[((cols + TILE - 1) // TILE, (rows + TILE - 1) // TILE), (TILE, BLOCK_ROWS)](x, out)
