# mutant: copies through the host element by element, no kernel launched (blind solver)
import numpy as np
from numba import cuda


def transpose(x, out) -> None:
    rows, cols = x.shape
    for i in range(rows):
        row = np.ascontiguousarray(x[i, :].copy_to_host())
        for j in range(cols):
            out[j, i] = row[j]
