"""Grader for the numba track: ``reduce_sum(x, blocks, threads) -> float`` in reduce.py.

On a CPU the kernel runs in the numba-cuda simulator with the grader's additions
(cudasim_shim: warp shuffles, a shared-memory race detector, deadlock reports), with at most
8 blocks of 256 threads. Every input is a view of a larger buffer padded with NaN: reading
past the end raises an out-of-bounds error with the thread and block ids in the simulator,
and turns the sum into NaN on a GPU. Every size runs three times: same bits, correct sum.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.track("numba")

SIZES = [1, 2, 31, 32, 33, 255, 256, 257, 1000, 4099, 65537]
THREADS = 256
MAX_BLOCKS = {"cpu": 8, "cuda": 64}  # the simulator costs ~0.1-0.3 s per 256-thread block
RUNS = 3
PAD = 64  # NaN elements after x[n-1]

ReduceSum = Callable[[Any, int, int], Any]


@pytest.fixture(scope="session")
def cuda(device: str) -> ModuleType:
    from numba import cuda as numba_cuda
    from numba.cuda.core import config

    if device == "cpu":
        if not config.ENABLE_CUDASIM:
            pytest.fail("grader set-up: numba.cuda was imported before the simulator was enabled")
        import cudasim_shim

        cudasim_shim.install()
    elif config.ENABLE_CUDASIM:
        pytest.fail("grader set-up: the numba-cuda simulator is on although a GPU is used")
    return numba_cuda


@pytest.fixture
def reduce_sum(cuda: ModuleType, solution: ModuleType) -> ReduceSum:
    fn = getattr(solution, "reduce_sum", None)
    if not callable(fn):
        pytest.fail("reduce.py must define reduce_sum(x, blocks, threads) -> float")
    return fn


def grid(n: int, device: str, threads: int = THREADS) -> tuple[int, int]:
    return max(1, min(MAX_BLOCKS[device], -(-n // threads))), threads


def tolerance(data: np.ndarray) -> float:
    """1e-5 * log2(n) relative to sum(|x|) (0 for n = 0: the sum must be exactly 0)."""
    abs_sum = float(np.abs(data.astype(np.float64)).sum())
    return 1e-5 * max(1.0, math.log2(max(data.size, 2))) * abs_sum


def run_once(reduce_sum: ReduceSum, cuda: ModuleType, data: np.ndarray, blocks: int, threads: int):
    """One call on a NaN-padded device copy of ``data``; returns the sum as a float."""
    n = data.size
    padded = np.full(n + PAD, np.nan, dtype=np.float32)
    padded[:n] = data
    buffer = cuda.to_device(padded)
    call = f"reduce_sum(x, blocks={blocks}, threads={threads}) with n={n}"
    try:
        result = reduce_sum(buffer[:n], blocks, threads)
    except Exception as exc:  # the user's kernel or driver failed
        pytest.fail(f"{call} failed: {describe_failure(exc)}", pytrace=False)
    try:
        value = float(np.asarray(result).reshape(-1)[0]) if np.ndim(result) else float(result)
    except (TypeError, ValueError, IndexError):
        pytest.fail(f"{call} returned {type(result).__name__}; return the sum as a Python float")
    after = buffer.copy_to_host()
    if not np.array_equal(after[:n], padded[:n], equal_nan=True):
        pytest.fail(f"{call} modified its input x; reduce into a separate buffer", pytrace=False)
    if not np.isnan(after[n:]).all():
        pytest.fail(f"{call} wrote past the end of x (out-of-bounds store)", pytrace=False)
    if math.isnan(value) and not np.isnan(data).any():
        pytest.fail(
            f"{call} returned NaN: an out-of-bounds read past the end of x (the grader puts NaN "
            "after x[n-1]); guard every load with i < n",
            pytrace=False,
        )
    return value


def describe_failure(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, IndexError) or "out of bounds" in str(exc):
        return f"out-of-bounds access in the kernel ({text}); guard every load with i < n"
    return text


def check_sum(
    reduce_sum: ReduceSum,
    cuda: ModuleType,
    data: np.ndarray,
    blocks: int,
    threads: int,
    runs: int = RUNS,
) -> None:
    expected = float(data.astype(np.float64).sum())
    tol = tolerance(data)
    results = [run_once(reduce_sum, cuda, data, blocks, threads) for _ in range(runs)]
    where = f"n={data.size}, blocks={blocks}, threads={threads}"
    for got in results:
        if abs(got - expected) > tol:
            raise AssertionError(
                f"wrong sum for {where}: got {got!r}, expected {expected!r} "
                f"(tolerance {tol:.3g}){diagnose(got, data, blocks, threads)}"
            )
    if len({np.float32(r).tobytes() for r in results}) > 1:
        raise AssertionError(
            f"results differ between {runs} runs for {where}: {results}; a race (is there a "
            "cuda.syncthreads() between the shared-memory steps?) or float atomics, whose "
            "order changes the rounding; the sum must be the same bits every run"
        )


def diagnose(got: float, data: np.ndarray, blocks: int, threads: int) -> str:
    covered = blocks * threads
    if covered < data.size:
        head = float(data[:covered].astype(np.float64).sum())
        if abs(got - head) <= tolerance(data[:covered]):
            return (
                f"; that is the sum of only the first blocks*threads = {covered} elements: "
                "each thread must visit i, i + gridsize, i + 2*gridsize, ... (grid-stride loop)"
            )
    return ""


def random_data(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


# Cheap, diagnostic tests first: the grader may be run with -x (stop at the first failure).


def test_empty_input_sums_to_zero(reduce_sum: ReduceSum, cuda: ModuleType) -> None:
    got = run_once(reduce_sum, cuda, np.zeros(0, np.float32), 1, THREADS)
    assert got == 0.0, f"the sum of an empty array must be 0.0, got {got!r}"


def test_single_warp_block(reduce_sum: ReduceSum, cuda: ModuleType) -> None:
    """One block of 32 threads: the warp-level (shuffle) stage alone."""
    data = np.arange(1, 33, dtype=np.float32)  # lane i holds i+1, total 528 (exact)
    for n in (32, 20):
        got = run_once(reduce_sum, cuda, data[:n], 1, 32)
        want = float(data[:n].sum())
        assert got == want, (
            f"one block of 32 threads (one warp) over {data[:n].tolist()} gives {got!r}, "
            f"expected {want!r}: check the warp shuffle offsets (shfl_down_sync by 16, 8, 4, "
            "2, 1 sums 32 lanes into lane 0; an offset >= 32 adds a lane's own value again)"
        )


@pytest.mark.parametrize(("n", "blocks", "threads"), [(1000, 3, 64), (300, 2, 128), (97, 1, 32)])
def test_other_block_sizes(
    reduce_sum: ReduceSum, cuda: ModuleType, n: int, blocks: int, threads: int
) -> None:
    """Threads per block is a parameter (any power of two from 32 to 1024), not a constant."""
    check_sum(reduce_sum, cuda, random_data(n, seed=threads), blocks, threads, runs=1)


def test_negative_values(reduce_sum: ReduceSum, cuda: ModuleType, device: str) -> None:
    data = -np.random.default_rng(7).uniform(1.0, 2.0, 3000).astype(np.float32)
    check_sum(reduce_sum, cuda, data, *grid(data.size, device), runs=1)


@pytest.mark.parametrize("n", SIZES)
def test_sum_matches_float64(reduce_sum: ReduceSum, cuda: ModuleType, device: str, n: int) -> None:
    """Mixed-sign data, 3 runs: same bits and within 1e-5*log2(n) of the float64 sum."""
    check_sum(reduce_sum, cuda, random_data(n, seed=n), *grid(n, device))


def test_million_ones_exact(reduce_sum: ReduceSum, cuda: ModuleType, device: str) -> None:
    """Every partial sum of ones is an integer < 2^24, so float32 is exact in any order."""
    data = np.ones(1_000_000, np.float32)
    blocks, threads = grid(data.size, device)
    got = run_once(reduce_sum, cuda, data, blocks, threads)
    assert got == 1_000_000.0, (
        f"sum of 1e6 ones with blocks={blocks}, threads={threads} is {got!r}, expected exactly "
        f"1000000.0{diagnose(got, data, blocks, threads)}"
    )


@pytest.mark.cuda
def test_bandwidth_on_gpu(reduce_sum: ReduceSum, cuda: ModuleType, record_metric) -> None:
    """2^28 floats: median of 25 runs >= 50% of device-to-device copy bandwidth."""
    import gpu_bench
    import torch

    x = torch.rand(gpu_bench.N, device="cuda")
    expected = float(torch.sum(x, dtype=torch.float64))
    tol = gpu_bench.tolerance(gpu_bench.N, expected)
    copy, torch_sum = gpu_bench.baselines(x)
    blocks = 8 * torch.cuda.get_device_properties(x.device).multi_processor_count
    xd = cuda.as_cuda_array(x)
    timing = gpu_bench.time_runs(lambda i: float(reduce_sum(xd, blocks, THREADS)))
    bad = [r for r in timing.results if not abs(r - expected) <= tol]
    assert not bad, f"timed runs returned wrong sums {bad[:3]} (expected {expected!r} +- {tol:.3g})"
    assert len(set(timing.results)) == 1, f"timed runs differ: {sorted(set(timing.results))[:4]}"
    passed, message = gpu_bench.verdict("reduce_sum", timing, copy, torch_sum, record_metric)
    assert passed, message
