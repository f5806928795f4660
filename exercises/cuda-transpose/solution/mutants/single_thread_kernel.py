# mutant: one block of one thread loops over the whole matrix (blind solver)
from numba import cuda


@cuda.jit
def one_thread(x, out):
    rows, cols = x.shape
    for r in range(rows):
        for c in range(cols):
            out[c, r] = x[r, c]


def transpose(x, out) -> None:
    one_thread[1, 1](x, out)
