"""Inputs and the output check shared by both tracks (numpy in, numpy out).

The reference is a float64 softmax of each row (max subtracted, as in torch.softmax), with
a row of only -inf defined as zeros (README). A failed check names the first broken row and
what its numbers say about the cause: an unwritten tail, NaN from exp(-inf - (-inf)),
overflow from a missing max, or a normaliser that is off by one factor for the whole row
(too large: a sum not rescaled to the new max; too small: part of the row never reached the
final state).
"""

from __future__ import annotations

import linecache
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SENTINEL = -7.0  # y is filled with this before a call: softmax values lie in [0, 1]
ATOL = 1e-6
RTOL = 1e-5
SUM_TOL = 1e-5
NEG_INF = -np.inf


@dataclass(frozen=True)
class Case:
    """One input matrix and the block size the numba track launches it with."""

    name: str
    x: np.ndarray  # float32 [rows, cols]
    threads: int

    @property
    def shape(self) -> str:
        rows, cols = self.x.shape
        return f"rows={rows}, cols={cols}"


def _f32(rows: list[list[float]]) -> np.ndarray:
    return np.array(rows, dtype=np.float32)


def small_rows() -> np.ndarray:
    return _f32([[1, 2, 3, 4, 0, 0, 0, 0], [0] * 8, [-3, -1, 0, 1, 2, 3, 4, 5]])


def single_column() -> np.ndarray:
    return _f32([[5.0], [-1e4], [0.0], [3.5]])


def large_magnitude() -> np.ndarray:
    """|x| up to 1e4: exp(x) overflows float32 above about 88.7."""
    j = np.arange(40, dtype=np.float32)
    return np.stack([1e4 - j, -1e4 + j, np.where(j % 2 == 0, 1e4, -1e4), 100.0 * j]).astype(
        np.float32
    )


def all_neg_inf_rows() -> np.ndarray:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 37)).astype(np.float32)
    x[0] = NEG_INF
    x[2] = NEG_INF
    return x


def some_neg_inf(threads: int = 32) -> np.ndarray:
    """-inf where it hurts: at the start of every thread's walk, a thread whose columns are
    all -inf, and a row with a single finite value."""
    rng = np.random.default_rng(5)
    cols = 2 * threads
    x = rng.standard_normal((4, cols)).astype(np.float32) * 3
    x[0, ::2] = NEG_INF
    x[1, :threads] = NEG_INF
    x[2, ::threads] = NEG_INF
    x[3] = NEG_INF
    x[3, cols - 3] = 1.5
    return x


def random_rows(rows: int, cols: int, seed: int, scale: float = 4.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((rows, cols)) * scale).astype(np.float32)


def fuzz_cases(count: int, seed: int, threads: tuple[int, ...], max_cols: int) -> list[Case]:
    """Random shapes, scales and -inf patterns, smallest first."""
    rng = np.random.default_rng(seed)
    cases = []
    for k in range(count):
        rows = int(rng.integers(1, 4))
        cols = int(rng.integers(1, max_cols + 1))
        scale = float(rng.choice([1.0, 20.0, 500.0]))
        x = (rng.standard_normal((rows, cols)) * scale).astype(np.float32)
        if k % 3 == 1:
            x[rng.random((rows, cols)) < 0.2] = NEG_INF
        if k % 4 == 2:
            x[int(rng.integers(rows))] = NEG_INF
        t = int(rng.choice(threads))
        cases.append(Case(f"fuzz {k} (seed {seed}), scale {scale:g}", x, t))
    return sorted(cases, key=lambda c: (c.x.size, c.threads))


def reference(x: np.ndarray) -> np.ndarray:
    """Softmax over rows in float64 (what float64 torch.softmax computes, without importing
    torch into every run); a row of only -inf gives zeros (README)."""
    x64 = x.astype(np.float64)
    empty = np.isneginf(x64).all(axis=1)
    top = np.where(empty, 0.0, x64.max(axis=1, initial=-np.inf))[:, None]
    e = np.exp(x64 - top)
    total = e.sum(axis=1, keepdims=True)
    return np.where(empty[:, None], 0.0, e / np.where(total > 0, total, 1.0))


def _span(columns: np.ndarray) -> str:
    a, b = int(columns[0]), int(columns[-1])
    count = len(columns)
    if b - a + 1 == count:
        return f"columns {a}..{b}" if count > 1 else f"column {a}"
    return f"{count} columns ({a}, ..., {b})"


def check(
    x: np.ndarray,
    y: np.ndarray,
    call: str,
    threads: int | None = None,
    hint: Callable[[], str] = lambda: "",
) -> None:
    """Raise AssertionError naming the first broken row of ``y = softmax(x)``."""
    ref = reference(x)
    for r in suspect_rows(x, y, ref):
        why = row_problem(x[r], y[r], ref[r], threads, hint)
        if why is not None:
            raise AssertionError(f"{call}: row {r} {why}")


def suspect_rows(x: np.ndarray, y: np.ndarray, ref: np.ndarray) -> list[int]:
    """Rows that may be wrong (a fast whole-matrix test; row_problem decides)."""
    y64 = y.astype(np.float64)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(y64) | (np.abs(y64 - ref) > ATOL + RTOL * ref) | (y == SENTINEL)
        sums = np.where(np.isneginf(x).all(axis=1), 1.0, y64.sum(axis=1))
    rows = bad.any(axis=1) | ~(np.abs(sums - 1.0) <= SUM_TOL)
    return [int(r) for r in np.flatnonzero(rows)]


def row_problem(
    x: np.ndarray,
    y: np.ndarray,
    ref: np.ndarray,
    threads: int | None,
    hint: Callable[[], str],
) -> str | None:
    """What is wrong with one output row, or None."""
    cols = x.size
    unwritten = np.flatnonzero(y == SENTINEL)
    if unwritten.size:
        return unwritten_problem(unwritten, cols, threads)
    bad = np.flatnonzero(~np.isfinite(y))
    if bad.size:
        return non_finite_problem(x, y, int(bad[0]))
    if np.isneginf(x).all():
        j = int(np.flatnonzero(y != 0)[0]) if np.any(y != 0) else -1
        if j >= 0:
            return (
                f"is a row of only -inf: README defines its output as zeros, got {y[j]!r} at "
                f"column {j}"
            )
        return None
    wrong = np.abs(y.astype(np.float64) - ref) > ATOL + RTOL * ref
    total = float(y.astype(np.float64).sum())
    if wrong.any() or abs(total - 1.0) > SUM_TOL:
        j = int(np.flatnonzero(wrong)[0]) if wrong.any() else -1
        return value_problem(x, y, ref, total, j, threads, hint)
    return None


def unwritten_problem(unwritten: np.ndarray, cols: int, threads: int | None) -> str:
    text = f"(of {cols} columns): {_span(unwritten)} were never written"
    if threads:
        tail = cols % threads
        if tail and np.array_equal(unwritten, np.arange(cols - tail, cols)):
            return (
                f"{text}. That is the tail: the last cols % threads = {tail} columns (cols is "
                f"not a multiple of threads = {threads}). Loop j = tid, tid + threads, ... "
                "while j < cols, not over cols // threads whole chunks"
            )
    return (
        f"{text}: every thread must write each of its columns j = tid, tid + threads, ... "
        "while j < cols"
    )


def non_finite_problem(x: np.ndarray, y: np.ndarray, j: int) -> str:
    got = f"{y[j]!r} at column {j}"
    if np.isneginf(x).all():
        return (
            f"is a row of only -inf and gives {got}: README defines its output as zeros. "
            "There m = -inf and d = 0, so exp(x - m) = exp(-inf - (-inf)) = exp(NaN) and "
            "0 / 0 are NaN; when d == 0 write 0"
        )
    finite = x[np.isfinite(x)]
    if finite.size and float(np.abs(finite).max()) > 80.0:
        return (
            f"(values up to |x| = {float(np.abs(finite).max()):g}) gives {got}: exp overflowed "
            "(float32 exp(x) is inf above x = 88.7); subtract the running max: accumulate "
            "exp(x - m), never exp(x)"
        )
    if np.isneginf(x).any():
        return (
            f"contains -inf entries and gives {got}: while a state's max is still -inf, "
            "exp(v - m) and the rescale exp(m_old - m_new) compute exp(-inf - (-inf)) = NaN; "
            "skip the update (and the rescale) when the new max is -inf"
        )
    return (
        f"(finite inputs) gives {got}: a thread with no columns keeps m = -inf, d = 0, and "
        "merging two such states computes exp(-inf - (-inf)) = NaN; when the merged max is "
        "-inf, keep d = 0 without rescaling"
    )


def value_problem(
    x: np.ndarray,
    y: np.ndarray,
    ref: np.ndarray,
    total: float,
    j: int,
    threads: int | None,
    hint: Callable[[], str],
) -> str:
    extra = hint()
    if extra:
        return f"is wrong (sums to {total:.6g}): {extra}"
    big = ref > 1e-4 * ref.max()
    ratio = y[big].astype(np.float64) / ref[big]
    same_factor = ratio.min() > 0 and ratio.max() - ratio.min() <= 1e-3 * ratio.mean()
    if same_factor and total < 1.0 - SUM_TOL:
        return (
            f"sums to {total:.6g}, not 1, and every value is off by the same factor: the "
            "normaliser D is too large. When the max grows from m_old to m_new, and when two "
            "(m, d) states merge, each d must be rescaled to the new max: d_a * exp(m_a - m) + "
            "d_b * exp(m_b - m), m = max(m_a, m_b); a d added without that rescale counts its "
            "terms too heavily"
        )
    if same_factor and total > 1.0 + SUM_TOL:
        chunk = f" of threads = {threads}" if threads else ""
        return (
            f"sums to {total:.6g}, not 1, and every value is off by the same factor: the "
            f"normaliser D misses part of the row ({ref.size} columns). Every column must "
            f"enter the (m, d) pass, not only the first chunk{chunk} columns, and the states "
            "of every thread and warp must be merged into the row's (M, D)"
        )
    if j < 0:
        return f"sums to {total:.8g}, not 1 (tolerance {SUM_TOL:g})"
    finite = np.abs(x[np.isfinite(x)])
    if finite.size and float(finite.max()) > 80.0:
        return (
            f"(values up to |x| = {float(finite.max()):g}), column {j}: got {float(y[j])!r}, "
            f"expected {float(ref[j])!r}: float32 exp(x) overflows to inf above x = 88.7 and "
            "underflows to 0 below about x = -104; subtract the running max: accumulate "
            "exp(x - m), never exp(x)"
        )
    if not np.any(y) and np.isfinite(x).any():
        return (
            f"column {j}: got {float(y[j])!r}, expected {float(ref[j])!r}: every value of the "
            "row is 0 (the row sums to 0) though it has finite values, so the row's D was "
            "not a finite positive number, most likely NaN. D is NaN when two empty states "
            "merge (m = -inf, d = 0: a thread with no columns, or an unused lane of warp 0): "
            "exp(m_a - m) computes exp(-inf - (-inf)) = exp(NaN) = NaN, and a NaN D fails a "
            "`D > 0` test, so the write stores 0. When the merged max is -inf, skip the "
            "exponentials and keep d = 0"
        )
    return (
        f"column {j}: got {float(y[j])!r}, expected {float(ref[j])!r} (float64 softmax; "
        f"tolerance {ATOL:g} + {RTOL:g} * expected); the row sums to {total:.6g}"
    )


def describe_failure(exc: BaseException) -> str:
    """A kernel exception in the simulator, explained."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, OverflowError):
        where = _raising_line(exc)
        if where is not None and _exps_of_differences(where[1]):
            return (
                f"exp overflowed in the kernel ({text}; on a GPU: inf, then NaN) at "
                f"{where[0]}, `{where[1]}`, although that exp subtracts a max: exp(x - M) "
                "overflows only when M is below some x it is applied to, so this M is not the "
                "max of the whole row. Every column must enter the (m, d) pass (j = tid, "
                "tid + threads, ... while j < cols) and the states of every thread and warp "
                "must be merged into the row's (M, D) before the write"
            )
        return (
            f"exp overflowed in the kernel ({text}; on a GPU: inf, then NaN): subtract the "
            "running max: accumulate exp(x - m), never exp(x)"
        )
    if isinstance(exc, ZeroDivisionError):
        return (
            f"division by zero in the kernel ({text}; on a GPU: NaN): for a row of only -inf "
            "the sum d is 0; README defines that row's output as zeros (write 0 when d == 0)"
        )
    if isinstance(exc, IndexError) or "out of bounds" in str(exc):
        return (
            f"out-of-bounds access in the kernel ({text}); guard every column index with j < cols"
        )
    if "uninitialised shared memory" in str(exc):
        return (
            f"{text} (when another thread writes that slot later in the same step, a "
            "cuda.syncthreads() is missing between the write and this read)"
        )
    return text


def _raising_line(exc: BaseException) -> tuple[str, str] | None:
    """("file line N", source text) of the innermost frame of ``exc``'s traceback."""
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    filename = tb.tb_frame.f_code.co_filename
    text = linecache.getline(filename, tb.tb_lineno).strip()
    return (f"{Path(filename).name} line {tb.tb_lineno}", text) if text else None


def _exps_of_differences(line: str) -> bool:
    """Every exp call on ``line`` has a binary minus in its argument (``exp(v - m)``)."""
    args = []
    for m in re.finditer(r"\bexp\s*\(", line):
        depth, start = 1, m.end()
        for i in range(start, len(line)):
            depth += {"(": 1, ")": -1}.get(line[i], 0)
            if depth == 0:
                args.append(line[start:i])
                break
    return bool(args) and all(re.search(r"[\w)\]]\s*-", a) for a in args)
