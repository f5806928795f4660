"""Grader for the numba track: ``softmax(x, y, threads)`` in softmax.py.

On a CPU the kernel runs in the numba-cuda simulator with the grader's additions
(cudasim_shim: warp shuffles, a shared-memory race detector, divergent-barrier reports),
with one block of 32 to 128 threads per row and small matrices. Every input is a view of a
larger buffer whose extra row is NaN, and ``y`` starts filled with -7.0, so unwritten
columns, writes past the end and changes to ``x`` show. Every call's launches must be
``kernel[rows, threads]``. One call is watched as it runs: the
launches, and how many times each element of ``x`` is loaded from global memory.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import _audit
import _rows
import numpy as np
import pytest
from _rows import Case

pytestmark = pytest.mark.track("numba")

Softmax = Callable[[Any, Any, int], Any]


@pytest.fixture
def softmax(cuda: ModuleType, solution: ModuleType) -> Softmax:
    """The user's softmax(x, y, threads)."""
    fn = getattr(solution, "softmax", None)
    if not callable(fn):
        pytest.fail("softmax.py must define softmax(x, y, threads) -> None")
    return fn


def shuffle_hint() -> str:
    """A shuffle offset outside 1..31 seen by the simulator explains a wrong row."""
    try:
        import cudasim_shim
    except ImportError:
        return ""
    wide = sorted(cudasim_shim.WIDE_OFFSETS, reverse=True)
    if not wide:
        return ""
    return (
        f"shuffle offset {wide[0]} is outside 1..31: in a 32-lane warp a shuffle by {wide[0]} "
        "reads the lane's own state (PTX keeps the offset's low 5 bits), which is then merged "
        "twice; use offsets 16, 8, 4, 2, 1"
    )


def run(softmax: Softmax, cuda: ModuleType, x: np.ndarray, threads: int) -> np.ndarray:
    """One call on padded device copies; returns y (host). Fails on a crash or stray write."""
    rows, cols = x.shape
    x_pad = np.full((rows + 1, cols), np.nan, np.float32)
    x_pad[:rows] = x
    y_pad = np.full((rows + 1, cols), _rows.SENTINEL, np.float32)
    x_dev, y_dev = cuda.to_device(x_pad), cuda.to_device(y_pad)
    call = f"softmax(x, y, threads={threads}) with rows={rows}, cols={cols}"
    with _audit.launches(simulator=_in_simulator()) as seen:
        try:
            softmax(x_dev[:rows], y_dev[:rows], threads)
            if hasattr(cuda, "synchronize"):
                cuda.synchronize()
        except Exception as exc:  # the user's kernel failed
            pytest.fail(f"{call} failed: {_rows.describe_failure(exc)}", pytrace=False)
    if seen:
        check_launches(call, seen, rows, threads)
    x_after, y_after = x_dev.copy_to_host(), y_dev.copy_to_host()
    if not np.array_equal(x_after, x_pad, equal_nan=True):
        pytest.fail(f"{call} modified its input x; write only y", pytrace=False)
    if not (y_after[rows] == _rows.SENTINEL).all():
        pytest.fail(f"{call} wrote past the end of y (out-of-bounds store)", pytrace=False)
    return y_after[:rows]


def _in_simulator() -> bool:
    from numba import config

    return bool(getattr(config, "ENABLE_CUDASIM", False))


def check_launches(call: str, launches: list[tuple[int, int]], rows: int, threads: int) -> None:
    """Every launch of a call is kernel[rows, threads] (README), on every call."""
    wrong_grid = [g for g in launches if g != (rows, threads)]
    if not launches or wrong_grid:
        pytest.fail(
            f"{call} launched {launches or 'no kernel'} (blocks, threads): README: one "
            f"block of `threads` threads per row, i.e. kernel[{rows}, {threads}]",
            pytrace=False,
        )


def check_case(softmax: Softmax, cuda: ModuleType, case: Case) -> None:
    y = run(softmax, cuda, case.x, case.threads)
    call = f"{case.name} ({case.shape}, threads={case.threads})"
    try:
        _rows.check(case.x, y, call, case.threads, shuffle_hint)
    except AssertionError as exc:
        pytest.fail(str(exc), pytrace=False)


# Exact, diagnostic cases first: the grader may be run with -x (stop at the first failure).

EXACT = [
    Case("short rows, one warp", _rows.small_rows(), 32),
    Case("a single column (every output is 1)", _rows.single_column(), 32),
    Case("cols not a multiple of threads, two warps", _rows.random_rows(3, 70, seed=70), 64),
    Case("a long row, one warp", _rows.random_rows(1, 777, seed=777), 32),
    Case("long rows, two warps", _rows.random_rows(2, 1000, seed=1000, scale=10.0), 64),
    Case("four warps", _rows.random_rows(2, 129, seed=129), 128),
    Case("large magnitudes, |x| up to 1e4", _rows.large_magnitude(), 32),
    Case("rows of only -inf (output zeros)", _rows.all_neg_inf_rows(), 32),
    Case("rows with some -inf", _rows.some_neg_inf(32), 32),
]


@pytest.mark.parametrize("case", EXACT, ids=[c.name for c in EXACT])
def test_rows(softmax: Softmax, cuda: ModuleType, case: Case) -> None:
    """A float64 softmax within 1e-6 + 1e-5 * expected; every row sums to 1 within 1e-5."""
    check_case(softmax, cuda, case)


def test_one_pass_over_x(softmax: Softmax, cuda: ModuleType, device: str) -> None:
    """Watched in the simulator: one launch shape (rows blocks of threads), and every element
    of x loaded from global memory once or twice (the (m, d) pass and the write)."""
    if device != "cpu":
        pytest.skip("checked in the simulator (CPU run)")
    rows, cols, threads = 2, 300, 64
    x = _rows.random_rows(rows, cols, seed=300)
    x_dev = cuda.to_device(x)
    y_dev = cuda.to_device(np.full_like(x, _rows.SENTINEL))
    call = f"softmax(x, y, threads={threads}) with rows={rows}, cols={cols}"
    with _audit.recording(x_dev) as seen:
        try:
            softmax(x_dev, y_dev, threads)
        except Exception as exc:
            pytest.fail(f"{call} failed: {_rows.describe_failure(exc)}", pytrace=False)
    check_launches(call, seen.launches, rows, threads)
    explain_reads(call, seen.reads.reshape(rows, cols))
    try:
        _rows.check(x, y_dev.copy_to_host(), call, threads, shuffle_hint)
    except AssertionError as exc:
        pytest.fail(str(exc), pytrace=False)


def explain_reads(call: str, reads: np.ndarray) -> None:
    most = int(reads.max())
    if most > 2:
        r, j = (int(v) for v in np.unravel_index(int(reads.argmax()), reads.shape))
        kind = (
            "a three-pass kernel (max, then sum, then write), or x[r, j] read twice in one "
            "walk (for example `max(m, x[r, j])`, then `exp(x[r, j] - m_new)`)"
            if most == 3
            else "extra passes, or x[r, j] read more than once in one walk"
        )
        pytest.fail(
            f"{call} loaded x[{r}, {j}] from global memory {most} times (README: at most "
            f"twice): {kind}. README: one "
            "pass computes the running max m and the rescaled sum d together (online "
            "softmax), the write is the second and last; load each element once per pass "
            "into a local variable",
            pytrace=False,
        )
    unread = np.argwhere(reads == 0)
    if unread.size:
        r, j = (int(v) for v in unread[0])
        pytest.fail(
            f"{call} never loaded x[{r}, {j}] (nor {len(unread) - 1} other elements) from "
            "global memory: every element enters the (m, d) pass",
            pytrace=False,
        )


FUZZ_SEED = 2024


def test_fuzz_smallest_failure_first(softmax: Softmax, cuda: ModuleType, device: str) -> None:
    """Random shapes, scales and -inf patterns (fixed seed), smallest first: the first
    failure reported is the smallest failing input."""
    big = device == "cuda"
    cases = _rows.fuzz_cases(
        count=24 if big else 8,
        seed=FUZZ_SEED,
        threads=(32, 64, 256, 1024) if big else (32, 64),
        max_cols=5000 if big else 300,
    )
    for case in cases:
        check_case(softmax, cuda, case)


@pytest.mark.cuda
def test_bandwidth_on_gpu(softmax: Softmax, cuda: ModuleType, record_metric) -> None:
    """[rows, cols] float32 on the GPU: time against torch.softmax in the same run."""
    import _gpu_bench
    import torch

    x = _gpu_bench.bench_input()
    y = torch.empty_like(x)
    xd, yd = cuda.as_cuda_array(x), cuda.as_cuda_array(y)
    threads = _gpu_bench.THREADS
    timing = _gpu_bench.time_runs(lambda: softmax(xd, yd, threads))
    _gpu_bench.check_output(x, y)
    passed, message = _gpu_bench.verdict("softmax", timing, x, record_metric)
    assert passed, message
