"""GPU timing for the GEMM speed check (both tracks); imported only on a CUDA device.

C = A @ B with M = N = K = 4096 (float32). The candidate and ``torch.matmul`` (cuBLAS, with
TF32 disabled, so both do full float32 math) are timed in the same process with CUDA events:
WARMUP untimed runs, then the median of RUNS. Speed is 2 * M * N * K / time (TFLOPS); the
check passes at PASS_FRACTION of torch.matmul, and reports tiers above that.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

import torch

SIZE = 4096
WARMUP = 3
RUNS = 10
PASS_FRACTION = 0.05  # of torch.matmul TFLOPS: a tiled kernel with one output per thread
GOOD_FRACTION = 0.30  # register blocking (several outputs per thread)
EXCELLENT_FRACTION = 0.70


def operands() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A, B (normal, fixed seed) and a NaN-filled C, all SIZE x SIZE float32 on the GPU."""
    gen = torch.Generator(device="cuda").manual_seed(7)
    A = torch.randn(SIZE, SIZE, device="cuda", generator=gen)
    B = torch.randn(SIZE, SIZE, device="cuda", generator=gen)
    C = torch.full((SIZE, SIZE), float("nan"), device="cuda")
    return A, B, C


def median_ms(call: Callable[[], object]) -> float:
    for _ in range(WARMUP):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(RUNS):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def wrong_elements(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor) -> int:
    """Elements of C outside (K + 1) * 2^-23 * (|A| @ |B|) of the float64 product (NaN counts)."""
    K = A.shape[1]
    exact = A.double() @ B.double()
    bound = (K + 1) * 2.0**-23 * (A.double().abs() @ B.double().abs())
    ok = (C.double() - exact).abs() <= bound
    return int((~ok).sum().item())


def measure(
    name: str,
    call: Callable[[], object],
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    record: Callable[..., None],
) -> tuple[bool, str]:
    """Time ``call`` (which writes A @ B into C) and torch.matmul; (passed, message)."""
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # full float32 in cuBLAS too
    try:
        out = torch.empty_like(C)
        torch_ms = median_ms(lambda: torch.matmul(A, B, out=out))
        mine_ms = median_ms(call)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    torch.cuda.synchronize()
    bad = wrong_elements(A, B, C)
    M, K = A.shape
    N = B.shape[1]
    if bad:
        return False, f"{name}: {bad} elements of the timed {M}x{N}x{K} product are wrong"
    flops = 2.0 * M * N * K
    mine, theirs = flops / (mine_ms * 1e9), flops / (torch_ms * 1e9)
    fraction = mine / theirs
    record("time", mine_ms, "ms")
    record("tflops", mine, "TFLOPS")
    record("torch_matmul_tflops", theirs, "TFLOPS (TF32 off)")
    record("fraction_of_torch_matmul", 100 * fraction, "%")
    tier = 3 if fraction >= EXCELLENT_FRACTION else 2 if fraction >= GOOD_FRACTION else 1
    passed = fraction >= PASS_FRACTION
    if passed:
        record("tier", tier, "1 pass, 2 good (>= 30% of torch.matmul), 3 excellent (>= 70%)")
    message = (
        f"{name}: {mine:.2f} TFLOPS on {M}x{N}x{K} = {100 * fraction:.1f}% of torch.matmul "
        f"({theirs:.2f} TFLOPS, TF32 off); needs >= {100 * PASS_FRACTION:.0f}% (shared-memory "
        "tiles, threadIdx.x along the columns of B and C so that loads are coalesced)"
    )
    print(message)
    return passed, message
