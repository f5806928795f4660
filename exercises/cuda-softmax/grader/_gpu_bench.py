"""GPU timing for the softmax performance checks (both tracks); imported only on a GPU.

The input is a [ROWS, COLS] float32 matrix (512 MiB). Each candidate is timed with CUDA
events on the current stream: WARMUP untimed calls, then RUNS timed calls, median reported,
against ``torch.softmax`` on the same tensor in the same run. Effective bandwidth counts the
minimum traffic, one read and one write of the matrix (2 x 4 x ROWS x COLS bytes).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

import torch

ROWS, COLS = 32768, 4096
THREADS = 256  # block size the numba track is called with
WARMUP = 3
RUNS = 20
PASS_FRACTION = 0.40  # of torch.softmax's speed (a soft bar)
GOOD_FRACTION = 0.75
EXCELLENT_FRACTION = 0.95


@dataclass(frozen=True)
class Timing:
    median_ms: float

    def bandwidth(self) -> float:
        """Effective GB/s: one read and one write of the matrix in the median time."""
        return 2 * 4.0 * ROWS * COLS / (self.median_ms * 1e-3) / 1e9


def bench_input() -> torch.Tensor:
    gen = torch.Generator(device="cuda").manual_seed(0)
    return torch.randn(ROWS, COLS, device="cuda", generator=gen) * 4


def time_runs(call: Callable[[], object], warmup: int = WARMUP, runs: int = RUNS) -> Timing:
    """Median time of ``call()`` in milliseconds, measured with CUDA events."""
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return Timing(statistics.median(times))


def check_output(x: torch.Tensor, y: torch.Tensor) -> None:
    """The timed output matches float64 torch.softmax within the README tolerance."""
    torch.cuda.synchronize()
    ref = torch.softmax(x.double(), dim=1)
    err = (y.double() - ref).abs() - (1e-6 + 1e-5 * ref)
    worst = float(err.max())
    if worst > 0:
        r, j = divmod(int(err.argmax()), COLS)
        raise AssertionError(
            f"the timed output is wrong at row {r}, column {j}: got {float(y[r, j])!r}, "
            f"expected {float(ref[r, j])!r} (tolerance 1e-6 + 1e-5 * expected)"
        )


def verdict(
    name: str, candidate: Timing, x: torch.Tensor, record: Callable[..., None]
) -> tuple[bool, str]:
    """Time torch.softmax on ``x``, record the metrics; return (passed, message)."""
    torch_timing = time_runs(lambda: torch.softmax(x, dim=1))
    fraction = torch_timing.median_ms / candidate.median_ms
    record("time", candidate.median_ms, "ms")
    record("bandwidth", candidate.bandwidth(), "GB/s")
    record("torch_softmax_time", torch_timing.median_ms, "ms")
    record("torch_softmax_bandwidth", torch_timing.bandwidth(), "GB/s")
    record("fraction_of_torch_softmax", 100 * fraction, "%")
    passed = fraction >= PASS_FRACTION
    if passed:
        tier = 3 if fraction >= EXCELLENT_FRACTION else 2 if fraction >= GOOD_FRACTION else 1
        record("tier", tier, "1 pass, 2 good (>=75% of torch), 3 excellent (>=95% of torch)")
    message = (
        f"{name}: {candidate.median_ms:.3f} ms on [{ROWS}, {COLS}] float32 "
        f"({candidate.bandwidth():.0f} GB/s effective) = {100 * fraction:.0f}% of "
        f"torch.softmax's speed ({torch_timing.median_ms:.3f} ms, "
        f"{torch_timing.bandwidth():.0f} GB/s); needs >= {100 * PASS_FRACTION:.0f}% "
        "(coalesced loads, one (m, d) pass plus the write, enough threads per row)"
    )
    return passed, message
