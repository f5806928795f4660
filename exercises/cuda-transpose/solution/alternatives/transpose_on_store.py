# alternative: transposes on the way into shared memory, blocks of 32 x 4 (blind solver)
"""Transpose on the way *into* shared memory: the coalesced load of x stores tile[tx, j]
(a column of the padded tile, conflict-free thanks to the pad), and the coalesced store to
out reads tile[j, tx] (a row). Same coalescing on x and out, no bank conflicts, one barrier;
uses cuda.blockDim instead of constants for the strides."""

import numba
from numba import cuda

TILE = 32


@cuda.jit
def kernel(x, out):
    tile = cuda.shared.array((TILE, TILE + 1), numba.float32)
    rows, cols = x.shape
    tx = cuda.threadIdx.x
    step = cuda.blockDim.y
    r0 = cuda.blockIdx.y * TILE
    c0 = cuda.blockIdx.x * TILE
    j = cuda.threadIdx.y
    while j < TILE:
        if r0 + j < rows and c0 + tx < cols:
            tile[tx, j] = x[r0 + j, c0 + tx]
        j += step
    cuda.syncthreads()
    j = cuda.threadIdx.y
    while j < TILE:
        if c0 + j < cols and r0 + tx < rows:
            out[c0 + j, r0 + tx] = tile[j, tx]
        j += step


def transpose(x, out) -> None:
    rows, cols = x.shape
    kernel[((cols + TILE - 1) // TILE, (rows + TILE - 1) // TILE), (TILE, 4)](x, out)
