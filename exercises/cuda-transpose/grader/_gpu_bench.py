"""GPU timing for the transpose performance checks (both tracks); imported only on a GPU.

A transpose reads and writes every element once, like a copy, so its bar is a copy of the
same tensor measured in the same process (``out.copy_(x)``); ``out.copy_(x.t())`` (torch's
own strided copy, a transpose) is reported beside it. Each timing is the median over RUNS
batches of BATCH back-to-back calls between two CUDA events, divided by BATCH, so the host's
launch overhead (a Python call for the numba track) overlaps the kernels instead of being
timed. After timing, the output is compared with ``x.t()``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import torch

N = 16384  # a square N x N float32 matrix: 1 GiB, and 1 GiB more for out
WARMUP = 2
RUNS = 7
BATCH = 5
PASS_FRACTION = 0.40  # of copy bandwidth: a soft bar (a naive transpose can come close)
GOOD_FRACTION = 0.75


def time_ms(call: Callable[[], Any]) -> float:
    """Median milliseconds per ``call()``."""
    for _ in range(WARMUP):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(RUNS):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(BATCH):
            call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / BATCH)
    return statistics.median(times)


def measure(
    name: str,
    call: Callable[[], Any],
    x: torch.Tensor,
    out: torch.Tensor,
    record: Callable[[str, float, str], None],
) -> tuple[bool, str]:
    """Time ``call`` (which writes x.T into out) against copies; record the metrics and
    return (passed, message)."""
    nbytes = 2.0 * x.numel() * x.element_size()  # read x, write out
    copy_ms = time_ms(lambda: out.copy_(x))
    torch_ms = time_ms(lambda: out.copy_(x.t()))
    out.fill_(float("nan"))
    ms = time_ms(call)
    torch.cuda.synchronize()
    if not torch.equal(out, x.t()):
        wrong = int((out != x.t()).sum())
        return False, f"{name}: after the timed runs {wrong} elements of out differ from x.T"
    bandwidth = nbytes / (ms * 1e-3) / 1e9
    copy_bw = nbytes / (copy_ms * 1e-3) / 1e9
    torch_bw = nbytes / (torch_ms * 1e-3) / 1e9
    fraction = bandwidth / copy_bw
    record("time", ms, "ms")
    record("bandwidth", bandwidth, "GB/s")
    record("copy_bandwidth", copy_bw, "GB/s")
    record("torch_transpose_bandwidth", torch_bw, "GB/s")
    record("fraction_of_copy_bandwidth", 100 * fraction, "%")
    record("fraction_of_torch_transpose", 100 * bandwidth / torch_bw, "%")
    passed = fraction >= PASS_FRACTION
    if passed:
        record("tier", 2 if fraction >= GOOD_FRACTION else 1, "1 pass, 2 good (>=75% of copy)")
    message = (
        f"{name}: {bandwidth:.0f} GB/s on a {N} x {N} float32 matrix = {100 * fraction:.0f}% "
        f"of a copy of the same bytes ({copy_bw:.0f} GB/s; torch's transposing copy: "
        f"{torch_bw:.0f} GB/s); needs >= {100 * PASS_FRACTION:.0f}% of copy bandwidth "
        "(coalesced loads and stores through a shared-memory tile without bank conflicts)"
    )
    print(message)
    return passed, message
