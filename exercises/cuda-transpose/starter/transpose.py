"""cuda-transpose, numba track: out = x.T through a shared-memory tile.

Grade with:  quizzer exercise cuda-transpose --check --track numba
Without a GPU the kernel runs in the numba-cuda simulator (every CUDA thread is a Python
thread), so keep to the features listed in the README.
"""

import numba
from numba import cuda

TILE = 32  # the tile is TILE x TILE elements
BLOCK_ROWS = 8  # blockDim = (TILE, BLOCK_ROWS): each thread moves TILE // BLOCK_ROWS elements


@cuda.jit
def transpose_kernel(x, out):
    """Block (bx, by) moves the tile x[by*TILE:, bx*TILE:] to out[bx*TILE:, by*TILE:]."""
    tile = cuda.shared.array((TILE, TILE), numba.float32)  # TODO: the bank-conflict-free shape
    rows, cols = x.shape
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    # TODO 1: load the tile: consecutive tx read consecutive elements of a row of x
    #         (guard row < rows and col < cols), store it as tile[r, c] (index with a tuple)
    # TODO 2: wait until the whole block has stored its part of the tile
    # TODO 3: write the transposed tile: consecutive tx write consecutive elements of a row
    #         of out (guard against out's shape, (cols, rows))


def transpose(x, out) -> None:
    """Write x.T into out: x is a [rows, cols] float32 device array, out a [cols, rows] one.

    Launch transpose_kernel on a 2-D grid that covers every tile of x.
    """
    rows, cols = x.shape
    raise NotImplementedError(f"not implemented: transpose of a {rows} x {cols} matrix")
