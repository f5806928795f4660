# alternative: a fixed small grid whose blocks loop over tiles, a flat padded 1-D tile, 32x4 threads
"""cuda-transpose, numba track: out = x.T with persistent blocks and a flat shared tile.

The grid is at most GRID x GRID blocks; each block walks the tiles (tile_y, tile_x) with a
stride of the grid. The tile is one flat array of TILE * (TILE + 1) floats: element (r, c)
sits at r * (TILE + 1) + c, so a column of the tile has a stride of 33 words and spans all
32 banks. Because a block reuses its tile, it waits twice per tile: after the store (before
the read-back) and after the read-back (before the next store overwrites the tile).
"""

import numba
from numba import cuda

TILE = 32
PITCH = TILE + 1  # words per row of the flat tile
THREADS_Y = 4
GRID = 2  # blocks per grid dimension, at most


@cuda.jit
def transpose_kernel(x, out, tiles_y, tiles_x):
    tile = cuda.shared.array(TILE * PITCH, numba.float32)
    rows = x.shape[0]
    cols = x.shape[1]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y

    tile_y = cuda.blockIdx.y
    while tile_y < tiles_y:
        tile_x = cuda.blockIdx.x
        while tile_x < tiles_x:
            row0 = tile_y * TILE
            col0 = tile_x * TILE
            r = ty
            while r < TILE:
                if row0 + r < rows and col0 + tx < cols:
                    tile[r * PITCH + tx] = x[row0 + r, col0 + tx]
                r += THREADS_Y
            cuda.syncthreads()
            c = ty
            while c < TILE:
                if col0 + c < cols and row0 + tx < rows:
                    out[col0 + c, row0 + tx] = tile[tx * PITCH + c]
                c += THREADS_Y
            cuda.syncthreads()  # the next tile overwrites this one
            tile_x += cuda.gridDim.x
        tile_y += cuda.gridDim.y


def transpose(x, out) -> None:
    """Write x.T into out (x: [rows, cols] float32 device array, out: [cols, rows])."""
    rows, cols = x.shape
    tiles_y = (rows + TILE - 1) // TILE
    tiles_x = (cols + TILE - 1) // TILE
    grid = (min(tiles_x, GRID), min(tiles_y, GRID))
    transpose_kernel[grid, (TILE, THREADS_Y)](x, out, tiles_y, tiles_x)
