"""Grader for the numba track: ``transpose(x, out) -> None`` in transpose.py.

Every matrix is a view of a larger buffer whose other elements, like every element of
``out`` before the call, hold one particular quiet NaN (bits 0x7FC0DEAD): an element of
``out`` that still holds it was never written, and a change outside the views is a store out
of bounds. The values of ``x`` are distinct, so a wrong element of ``out`` says which
element of ``x`` it came from. Results must equal ``x.T`` bit for bit.

On a CPU the kernel runs in the numba-cuda simulator with the grader's additions
(cudasim_shim: a shared-memory race detector, divergent-barrier reports) and a recorder
(_simaudit) that checks every access of ``x`` and ``out`` against their bounds and, for one
call, groups the accesses warp by warp to check coalescing and shared-memory bank conflicts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.track("numba")

SENTINEL = 0x7FC0DEAD  # a quiet NaN: "never written" / "outside the matrix"
PAD = (2, 3)  # extra rows and columns of the buffer each matrix is a view of
FULL_TILES = [(32, 32), (64, 64)]
SHAPES = [(1, 1), (1, 70), (70, 1), (33, 65)]
GPU_SHAPES = [(1000, 1999), (4097, 3), (3, 4097), (2048, 2048)]
STRUCTURE_SHAPE = (40, 72)  # 3 x 2 tiles of 32: full and partial tiles, not square
FUZZ_CASES = 3
TILE_GUESS = 32  # for diagnosis only: which tile a wrong element came from
FUZZ_SEED = 11
WARP = 32

Transpose = Callable[[Any, Any], Any]


def shape_id(shape: tuple[int, int]) -> str:
    """(33, 65) -> "33x65" (test ids and messages)."""
    return f"{shape[0]}x{shape[1]}"


@pytest.fixture
def transpose(cuda: ModuleType, solution: ModuleType) -> Transpose:
    """The user's transpose function."""
    fn = getattr(solution, "transpose", None)
    if not callable(fn):
        pytest.fail("transpose.py must define transpose(x, out) -> None")
    return fn


def distinct_values(rows: int, cols: int, seed: int = 0) -> np.ndarray:
    """A [rows, cols] float32 matrix of distinct integers (exact in float32)."""
    rng = np.random.default_rng(seed)
    return rng.permutation(rows * cols).astype(np.float32).reshape(rows, cols)


def special_values(rows: int, cols: int, seed: int) -> np.ndarray:
    """Random float32 with -0.0, infinities, subnormals and extremes mixed in."""
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((rows, cols)).astype(np.float32)
    specials = np.array([-0.0, np.inf, -np.inf, 1e-45, -3e38, 3e38], dtype=np.float32)
    mask = rng.random((rows, cols)) < 0.2
    data[mask] = rng.choice(specials, size=int(mask.sum()))
    return data


def bits(a: np.ndarray) -> np.ndarray:
    """The float32 array's bit patterns (exact comparison, NaN payloads included)."""
    return np.ascontiguousarray(a).view(np.uint32)


def padded(a: np.ndarray) -> np.ndarray:
    """``a`` in the top-left corner of a larger sentinel-filled buffer."""
    buf = np.full((a.shape[0] + PAD[0], a.shape[1] + PAD[1]), SENTINEL, np.uint32)
    buf = buf.view(np.float32)
    buf[: a.shape[0], : a.shape[1]] = a
    return buf


def describe_failure(exc: BaseException, before_barrier: bool) -> str:
    """One sentence for an exception raised by the user's kernel or launch."""
    text = f"{type(exc).__name__}: {exc}"
    message = str(exc)
    if "out-of-bounds" in message:
        return message
    if isinstance(exc, IndexError) or "out of bounds" in message:
        return (
            f"out-of-bounds access in the kernel ({text}): guard every load and store with "
            "the matrix bounds (x is [rows, cols], out is [cols, rows])"
        )
    if before_barrier and ("shared-memory race" in message or "uninitialised" in message):
        return (
            "no cuda.syncthreads() between the tile store and the tile load: a thread reads "
            "back an element of the tile that another thread stores, so every thread must wait "
            f"until the whole tile is stored ({message})"
        )
    if "uninitialised shared memory" in message:
        return (
            f"the write-back reads a slot of the tile that no thread stored ({message}): its "
            "bounds or block offsets differ from the load's. The tile loaded from "
            "x[by*TILE:, bx*TILE:] goes to out[bx*TILE:, by*TILE:], and the write-back's guard "
            "uses out's shape (out is [cols, rows]: out_row < cols and out_col < rows)"
        )
    if "shared-memory race" in message:
        return (
            f"{message}; a block that moves several tiles must also cuda.syncthreads() before "
            "overwriting the tile (after the last read of the previous one)"
        )
    return text


def run_once(
    transpose: Transpose,
    cuda: ModuleType,
    device: str,
    data: np.ndarray,
    keep: list[Any] | None = None,
) -> np.ndarray:
    """One call on views of sentinel-filled buffers; checks x and the padding, returns out.
    On a CPU the call is recorded; the record is appended to ``keep`` when given."""
    rows, cols = data.shape
    x_buffer = padded(data)
    out_buffer = padded(np.full((cols, rows), SENTINEL, np.uint32).view(np.float32))
    xd, od = cuda.to_device(x_buffer), cuda.to_device(out_buffer)
    x, out = xd[:rows, :cols], od[:cols, :rows]
    call = f"transpose(x, out) with x of shape ({rows}, {cols})"
    record = None
    try:
        if device == "cpu":
            import _simaudit

            with _simaudit.recording(x, out) as record:
                transpose(x, out)
        else:
            transpose(x, out)
            cuda.synchronize()
    except Exception as exc:  # the user's kernel, launch or driver failed
        before_barrier = record is not None and record.failed_before_barrier
        pytest.fail(f"{call} failed: {describe_failure(exc, before_barrier)}", pytrace=False)
    if keep is not None:
        keep.append(record)
    x_after, out_after = xd.copy_to_host(), od.copy_to_host()
    if not np.array_equal(bits(x_after), bits(x_buffer)):
        pytest.fail(f"{call} modified x (or the memory around it): x is read-only", pytrace=False)
    outside = bits(out_after).copy()
    outside[:cols, :rows] = SENTINEL
    if (outside != SENTINEL).any():
        r, c = np.argwhere(outside != SENTINEL)[0]
        pytest.fail(
            f"{call} wrote outside out (buffer element [{r}, {c}] next to out, which has shape "
            f"({cols}, {rows})): an out-of-bounds store; guard the store with out_row < cols "
            "and out_col < rows",
            pytrace=False,
        )
    return out_after[:cols, :rows]


def wrong_element(data: np.ndarray, got: np.ndarray) -> str | None:
    """Why ``got`` is not ``data.T`` (the first wrong element in row-major order), or None."""
    want = bits(data.T)
    have = bits(got)
    bad = np.argwhere(have != want)
    if not bad.size:
        return None
    i, j = (int(v) for v in bad[0])
    unwritten = have == SENTINEL
    if unwritten[i, j]:
        return (
            f"out[{i}, {j}] was never written ({int(unwritten.sum())} of {got.size} elements "
            "of out were never written): the grid must cover every tile, ceil(cols / TILE) "
            "blocks along x and ceil(rows / TILE) along y, and each block must store its whole "
            f"transposed tile (check the block offsets and the store's bounds: out has shape "
            f"({got.shape[0]}, {got.shape[1]}))"
        )
    source = np.argwhere(bits(data) == have[i, j])
    if not source.size and got[i, j] == data[j, i]:
        return (
            f"out[{i}, {j}] is {float(got[i, j])!r} where x[{j}, {i}] is {float(data[j, i])!r}: "
            "equal as numbers, different bits (the zero's sign was lost to arithmetic on the "
            "way, such as + 0.0); copy the values unchanged, bit for bit"
        )
    if not source.size:
        return f"out[{i}, {j}] is {got[i, j]!r}, a value that is not in x (expected x[{j}, {i}])"
    a, b = (int(v) for v in source[0])
    t = TILE_GUESS
    same_tile = (a // t, b // t) == (j // t, i // t)
    same_offset = (a % t, b % t) == (j % t, i % t)
    if same_tile and not same_offset:
        return (
            f"out[{i}, {j}] holds x[{a}, {b}] instead of x[{j}, {i}]: the right tile, not "
            "transposed inside; read the tile back with the indices swapped (store "
            "tile[ty, tx], load tile[tx, ty])"
        )
    if same_offset and not same_tile:
        return (
            f"out[{i}, {j}] holds x[{a}, {b}] instead of x[{j}, {i}]: transposed inside the "
            "tile but written to the wrong tile; swap the block offsets (the tile at block "
            "(bx, by) of x lands at block (by, bx) of out)"
        )
    return (
        f"out[{i}, {j}] holds x[{a}, {b}] instead of x[{j}, {i}] ({len(bad)} of {got.size} "
        "elements are wrong): check the block offsets (the tile at block (bx, by) of x lands "
        "at block (by, bx) of out) and the row/column indices"
    )


def check_transpose(transpose: Transpose, cuda: ModuleType, device: str, data: np.ndarray) -> None:
    """One call; fail with the first wrong element of out, if any."""
    got = run_once(transpose, cuda, device, data)
    why = wrong_element(data, got)
    if why is not None:
        pytest.fail(f"wrong transpose of a {shape_id(data.shape)} matrix: {why}", pytrace=False)


# Exact cases first: the grader may be run with -x (stop at the first failure).


@pytest.mark.parametrize("shape", FULL_TILES, ids=[shape_id(s) for s in FULL_TILES])
def test_full_tiles(
    transpose: Transpose, cuda: ModuleType, device: str, shape: tuple[int, int]
) -> None:
    """One 32 x 32 tile, then 2 x 2 tiles: no edges."""
    check_transpose(transpose, cuda, device, distinct_values(*shape, seed=shape[0]))


def test_coalescing_and_bank_conflicts(transpose: Transpose, cuda: ModuleType, device: str) -> None:
    """One 40 x 72 call recorded warp by warp: coalesced loads of x and stores to out, and
    no shared-memory bank conflict on any tile access."""
    if device != "cpu":
        pytest.skip("checked in the simulator (CPU run); a GPU run times it instead")
    data = distinct_values(*STRUCTURE_SHAPE, seed=5)
    records: list[Any] = []
    got = run_once(transpose, cuda, device, data, keep=records)
    call = f"transpose(x, out) with x of shape {STRUCTURE_SHAPE}"
    explain_structure(call, records[0])
    why = wrong_element(data, got)
    if why is not None:
        pytest.fail(f"wrong transpose of a {shape_id(data.shape)} matrix: {why}", pytrace=False)


def _index(index: tuple[int, ...]) -> str:
    """(3, 5) -> "3, 5"."""
    return ", ".join(map(str, index))


def explain_structure(call: str, seen: Any) -> None:
    """Fail with the first rule the recorded call broke: a kernel launched with whole warps,
    coalesced loads, coalesced stores, conflict-free shared memory."""
    if not seen.launches:
        pytest.fail(
            f"{call} launched no kernel: the transpose must run on the GPU (README: launch your "
            "kernel from transpose); copying through the host is not a GPU transpose",
            pytrace=False,
        )
    for _grid, block in seen.launches:
        threads = math.prod(block)
        if threads < WARP:
            pytest.fail(
                f"{call} launched a kernel with blocks of {block} = {threads} thread(s): a "
                f"block shorter than a warp ({WARP} threads) leaves lanes of every warp idle "
                "and serialises the copy; use blocks of (32, 8) threads (README step 2)",
                pytrace=False,
            )
    for kind, verb in (("load", "read"), ("store", "write")):
        found = seen.uncoalesced(kind)
        if found is None:
            continue
        group, a, b = found
        what = "row of x" if kind == "load" else "row of out"
        advice = (
            "col = blockIdx.x * TILE + threadIdx.x"
            if kind == "load"
            else "a naive transpose writes a column of out per warp; stage the tile in shared "
            "memory and write rows of out"
        )
        pytest.fail(
            f"{call}: uncoalesced global {kind}s: lanes {a.lane} and {b.lane} of {group.where()} "
            f"(threadIdx.x {a.tx} and {b.tx}) {verb} {group.array}[{_index(a.index)}] and "
            f"{group.array}[{_index(b.index)}], {b.address - a.address} bytes apart instead of "
            f"{group.itemsize}: consecutive threadIdx.x must {verb} consecutive elements of a "
            f"{what} ({advice})",
            pytrace=False,
        )
    for kind, verb in (("load", "read"), ("store", "write")):
        spread = seen.scattered(kind)
        if spread is None:
            continue
        group, sectors, needed = spread
        pytest.fail(
            f"{call}: uncoalesced global {kind}s: the lanes of {group.where()} {verb} "
            f"{len(group.accesses)} elements of {group.array} spread over {sectors} 32-byte "
            f"sectors, where {needed} would hold them: the lanes of a warp are numbered "
            f"threadIdx.x first (lane = threadIdx.x + blockDim.x * threadIdx.y), so "
            f"threadIdx.x must run along the rows of {group.array}, and each warp must "
            f"{verb} whole rows (README steps 2 and 4)",
            pytrace=False,
        )
    conflict = seen.worst_conflict()
    if conflict is not None:
        group = conflict.group
        shape = group.shape
        lanes = ", ".join(map(str, conflict.lanes[:4])) + (
            ", ..." if len(conflict.lanes) > 4 else ""
        )
        if len(shape) == 2 and shape[0] == shape[1] + 1 and shape[1] % 2 == 0:
            fix = (
                f"the padding is on the wrong dimension: a tile of shape {shape} still has rows "
                f"of {shape[1]} words; pad the row length (the last dimension): (TILE, TILE + 1)"
            )
        else:
            fix = (
                "pad each row of the tile by one element, cuda.shared.array((TILE, TILE + 1), "
                "numba.float32), or XOR-swizzle the column (tile[r, c ^ r]) so that a column of "
                "the tile spans all 32 banks"
            )
        pytest.fail(
            f"{call}: {conflict.degree}-way shared-memory bank conflict on a tile {group.kind} "
            f"({group.where()}): lanes {lanes} hit bank {conflict.bank} at {conflict.degree} "
            f"different addresses of {group.array} (32 banks of 4 bytes: word w is in bank "
            f"w % 32, so a column of a {shape[-1]}-word-wide tile stays in few banks); {fix}",
            pytrace=False,
        )


@pytest.mark.parametrize("shape", SHAPES, ids=[shape_id(s) for s in SHAPES])
def test_odd_shapes(
    transpose: Transpose, cuda: ModuleType, device: str, shape: tuple[int, int]
) -> None:
    """1 x 1, 1 x N, N x 1, not multiples of the tile, non-square."""
    check_transpose(transpose, cuda, device, distinct_values(*shape, seed=shape[0] + shape[1]))


@pytest.mark.parametrize("shape", GPU_SHAPES, ids=[shape_id(s) for s in GPU_SHAPES])
def test_large_shapes_on_gpu(
    transpose: Transpose, cuda: ModuleType, device: str, shape: tuple[int, int]
) -> None:
    """Larger and very thin matrices, with special values (GPU only)."""
    if device != "cuda":
        pytest.skip("large matrices run on a GPU only (the simulator is slow)")
    check_transpose(transpose, cuda, device, special_values(*shape, seed=shape[0]))


def test_random_shapes_and_special_values(
    transpose: Transpose, cuda: ModuleType, device: str
) -> None:
    """Seeded random shapes (1..72 each side) with -0.0, inf and subnormals: bit-exact. The
    smallest failing shape is reported."""
    rng = np.random.default_rng(FUZZ_SEED)
    shapes = sorted({(int(r), int(c)) for r, c in rng.integers(1, 73, size=(FUZZ_CASES, 2))})
    failures: list[tuple[int, str]] = []
    for k, (rows, cols) in enumerate(shapes):
        data = special_values(rows, cols, seed=FUZZ_SEED + k)
        try:
            check_transpose(transpose, cuda, device, data)
        except pytest.fail.Exception as exc:
            failures.append((rows * cols, str(exc)))
    if failures:
        failures.sort()
        pytest.fail(
            f"{len(failures)} of {len(shapes)} random shapes fail; the smallest: {failures[0][1]}",
            pytrace=False,
        )


@pytest.mark.cuda
def test_bandwidth_on_gpu(
    transpose: Transpose, cuda: ModuleType, record_metric: Callable[[str, float, str], None]
) -> None:
    """16384 x 16384 floats: time per call against torch's copy of the same bytes."""
    import _gpu_bench
    import torch

    x = torch.rand(_gpu_bench.N, _gpu_bench.N, device="cuda")
    out = torch.empty_like(x)
    xd, od = cuda.as_cuda_array(x), cuda.as_cuda_array(out)
    passed, message = _gpu_bench.measure(
        "transpose", lambda: transpose(xd, od), x, out, record_metric
    )
    assert passed, message
