"""Compare a GEMM result with the float64 product and say what went wrong (both tracks).

The tolerance is the classic bound for a float32 dot product of length K accumulated in
float32: each element may differ from the exact product by (K + 1) * 2^-23 * (|A| @ |B|)
(twice the unit roundoff per term, so the order of the additions and FMA or not are free).
Integer-valued inputs with small sums are exact in float32 in any order, and compared
exactly.
"""

from __future__ import annotations

import numpy as np

UNIT = 2.0**-23  # twice the float32 unit roundoff

# tile sizes to try when guessing the shape of a wrong grid (the CUDA track's is unknown)
GUESS_TILES = (4, 8, 16, 32, 64, 128, 256)


def tolerance(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Per-element bound on |C - A @ B| for a float32 dot product of length K."""
    K = A.shape[1]
    return (K + 1) * UNIT * (np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)))


def problem(
    got: np.ndarray,
    A: np.ndarray,
    B: np.ndarray,
    tiles: tuple[int, ...],
    exact: bool = False,
    gpu: bool = False,
) -> str | None:
    """None when ``got`` is A @ B; otherwise one sentence naming what is wrong."""
    M, K = A.shape
    N = B.shape[1]
    want = A.astype(np.float64) @ B.astype(np.float64)
    if got.shape != (M, N):
        return f"C has shape {got.shape}, expected ({M}, {N})"
    unwritten = np.isnan(got)
    if unwritten.any():
        return _unwritten(unwritten, tiles, K, gpu)
    tol = np.zeros_like(want) if exact else tolerance(A, B)
    bad = np.abs(got.astype(np.float64) - want) > tol
    if not bad.any():
        return None
    r, c = (int(i) for i in np.argwhere(bad)[0])
    how = "exactly (integer inputs: float32 is exact here)" if exact else f"within {tol[r, c]:.3g}"
    text = (
        f"C[{r}, {c}] = {float(got[r, c])!r}, expected {float(want[r, c])!r} {how}; "
        f"{int(bad.sum())} of {M * N} elements are wrong"
    )
    for tile in tiles:
        if _transposed_tile(got, want, tol, r, c, tile):
            return (
                f"{text}: each {tile} x {tile} tile of C is transposed (C[r, c] holds the "
                "value of C[c, r] inside the tile): in the inner loop thread (ty, tx) must "
                "multiply row ty of the A tile by column tx of the B tile, "
                "a_tile[ty, k] * b_tile[k, tx]"
            )
    if any(t < K for t in tiles):
        return (
            f"{text}: K = {K} spans several k-tiles; check that step t loads the tile that "
            "starts at k0 = t * tile (A[row, k0 + tx] and B[k0 + ty, col]) and that the sum "
            "accumulates over all the k-tiles"
        )
    return text


def _unwritten(mask: np.ndarray, tiles: tuple[int, ...], K: int, gpu: bool) -> str:
    M, N = mask.shape
    r, c = (int(i) for i in np.argwhere(mask)[0])
    text = f"C[{r}, {c}] is NaN ({int(mask.sum())} of {M * N} elements)"
    rows, cols = np.indices(mask.shape)
    for tile in [*tiles, *(t for t in GUESS_TILES if t not in tiles)]:
        up_m, up_n = -(-M // tile) * tile, -(-N // tile) * tile
        swapped = np.array_equal(mask, ~((rows < up_n) & (cols < up_m)))
        floor_m, floor_n = (M // tile) * tile, (N // tile) * tile
        floor = any(
            np.array_equal(mask, ~((rows < keep_m) & (cols < keep_n)))
            for keep_m, keep_n in ((floor_m, N), (M, floor_n), (floor_m, floor_n))
        )
        if swapped and floor:
            return (
                f"{text}: with tile {tile} two grid bugs leave exactly these elements "
                "unwritten for this shape, so either may be the cause: the grid's x and y are "
                "swapped (blockIdx.x counts column tiles, so the grid is (ceil(N / tile), "
                "ceil(M / tile)), x for the N columns and y for the M rows), or the grid has "
                "M // tile or N // tile blocks (also when clamped with max(1, ...)) where it "
                "needs the ceil division: (M + tile - 1) // tile row tiles and "
                "(N + tile - 1) // tile column tiles"
            )
        if swapped:
            return (
                f"{text}: the grid's x and y are swapped (tile {tile}): blockIdx.x counts "
                "column tiles, so the grid is (ceil(N / tile), ceil(M / tile)), x for the N "
                "columns and y for the M rows"
            )
        if floor:
            return (
                f"{text}: the last partial tile of C was never computed; the grid has "
                f"M // tile or N // tile blocks (tile {tile}), it needs the ceil "
                "division: (M + tile - 1) // tile row tiles and (N + tile - 1) // tile "
                "column tiles"
            )
    cause = (
        "it was never written (the grader fills C with NaN), or the kernel read past the end "
        "of A or B (the grader puts NaN there)"
        if gpu
        else "it was never written (the grader fills C with NaN)"
    )
    return f"{text}: {cause}; the grid must cover every element of C"


def _transposed_tile(
    got: np.ndarray, want: np.ndarray, tol: np.ndarray, r: int, c: int, tile: int
) -> bool:
    """The full tile holding (r, c) is the transpose of the expected one (and differs)."""
    r0, c0 = (r // tile) * tile, (c // tile) * tile
    if r0 + tile > got.shape[0] or c0 + tile > got.shape[1]:
        return False
    block = got[r0 : r0 + tile, c0 : c0 + tile].astype(np.float64)
    expect = want[r0 : r0 + tile, c0 : c0 + tile].T
    return bool(np.all(np.abs(block - expect) <= tol[r0 : r0 + tile, c0 : c0 + tile].T))


def describe_failure(exc: BaseException) -> str:
    """The simulator's error, with the README rule it points at."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, IndexError) or "out of bounds" in str(exc):
        return (
            f"out-of-bounds access in the kernel ({text}); guard every load of the tail "
            "tiles: read A[row, k] only when row < M and k < K, B[k, col] only when k < K "
            "and col < N (store 0.0 in the tile otherwise), and write C[row, col] only when "
            "row < M and col < N"
        )
    if "uninitialised shared memory" in str(exc):
        return (
            f"{text}. Zero-fill the out-of-range tile elements: a thread whose A or B element "
            "lies outside the matrix must still store 0.0 into its tile slot, so the inner "
            "loop adds 0 there"
        )
    return text
