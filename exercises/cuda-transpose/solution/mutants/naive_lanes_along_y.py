# mutant: a naive kernel with blocks (1, 256), the column index from threadIdx.y (blind solver)
from numba import cuda

BLOCK = 256


@cuda.jit
def naive(x, out):
    rows, cols = x.shape
    c = cuda.blockIdx.x * BLOCK + cuda.threadIdx.y   # lanes of a warp: consecutive columns
    r = cuda.blockIdx.y
    if r < rows and c < cols:
        out[c, r] = x[r, c]


def transpose(x, out) -> None:
    rows, cols = x.shape
    naive[((cols + BLOCK - 1) // BLOCK, rows), (1, BLOCK)](x, out)
