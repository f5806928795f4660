"""GPU timing for the reduce performance test (both tracks); imported only on a CUDA device.

Each candidate is timed with CUDA events on the current stream: WARMUP untimed runs, then
RUNS timed runs, median reported. The baseline is a device-to-device copy of the same
tensor measured in the same process (it reads and writes, so it moves 2 x 4N bytes), and
``torch.sum`` for comparison.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

N = 1 << 28  # 1 GiB of float32
WARMUP = 5
RUNS = 25
PASS_FRACTION = 0.50  # of copy bandwidth
GOOD_FRACTION = 0.75
EXCELLENT_VS_TORCH = 0.90  # of torch.sum bandwidth


@dataclass(frozen=True)
class Timing:
    median_ms: float
    results: list[Any]  # what each timed run returned, in order

    def bandwidth(self, nbytes: float) -> float:
        """GB/s for moving ``nbytes`` in the median time."""
        return nbytes / (self.median_ms * 1e-3) / 1e9


def time_runs(call: Callable[[int], Any], warmup: int = WARMUP, runs: int = RUNS) -> Timing:
    """``call(i)`` launches run ``i`` (i < 0 for warm-ups) and returns its result."""
    for i in range(warmup):
        call(-1 - i)
    torch.cuda.synchronize()
    times, results = [], []
    for i in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        results.append(call(i))
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return Timing(statistics.median(times), results)


def baselines(x: torch.Tensor) -> tuple[Timing, Timing]:
    """(device-to-device copy, torch.sum) timings on ``x``."""
    dst = torch.empty_like(x)
    copy = time_runs(lambda i: dst.copy_(x))
    torch_sum = time_runs(lambda i: torch.sum(x))
    return copy, torch_sum


def tolerance(n: int, abs_sum: float) -> float:
    """Allowed |float32 result - float64 sum|: 1e-5 * log2(n) relative to sum(|x|)."""
    return 1e-5 * max(1.0, math.log2(max(n, 2))) * abs_sum


def verdict(
    name: str, candidate: Timing, copy: Timing, torch_sum: Timing, record: Callable[..., None]
) -> tuple[bool, str]:
    """Record the metrics; return (passed, message)."""
    nbytes = 4.0 * N
    bw = candidate.bandwidth(nbytes)
    copy_bw = copy.bandwidth(2 * nbytes)
    torch_bw = torch_sum.bandwidth(nbytes)
    frac_copy = bw / copy_bw
    frac_torch = bw / torch_bw
    tier = 3 if frac_torch >= EXCELLENT_VS_TORCH else 2 if frac_copy >= GOOD_FRACTION else 1
    record("time", candidate.median_ms, "ms")
    record("bandwidth", bw, "GB/s")
    record("copy_bandwidth", copy_bw, "GB/s")
    record("torch_sum_bandwidth", torch_bw, "GB/s")
    record("fraction_of_copy_bandwidth", 100 * frac_copy, "%")
    record("fraction_of_torch_sum", 100 * frac_torch, "%")
    passed = frac_copy >= PASS_FRACTION
    if passed:
        record("tier", tier, "1 pass, 2 good (>=75% of copy), 3 excellent (>=90% of torch.sum)")
    message = (
        f"{name}: {bw:.0f} GB/s on 2^28 floats = {100 * frac_copy:.0f}% of the device-to-device "
        f"copy bandwidth ({copy_bw:.0f} GB/s) and {100 * frac_torch:.0f}% of torch.sum "
        f"({torch_bw:.0f} GB/s); needs >= {100 * PASS_FRACTION:.0f}% of copy bandwidth "
        "(coalesced grid-stride loads, enough blocks to fill every SM, one pass over memory)"
    )
    return passed, message
