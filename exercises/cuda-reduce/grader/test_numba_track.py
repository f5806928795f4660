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
# ones summed exactly: 10^6 on a GPU; on a CPU 2^18 + 1 (128 loads per simulated thread, a
# Python call each), which keeps every partial sum an integer below 2^24 all the same
ONES = {"cpu": (1 << 18) + 1, "cuda": 1_000_000}

ReduceSum = Callable[[Any, int, int], Any]


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
    if not isinstance(result, float):
        pytest.fail(
            f"{call} returned a {type(result).__module__}.{type(result).__name__}, not a Python "
            "float: return float(...) of the sum (README: reduce_sum(...) -> float)",
            pytrace=False,
        )
    value = result
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
            f"expected {want!r}: the warp stage alone is wrong (32 threads: no tree step). "
            + warp_stage_cause()
        )


def warp_stage_cause() -> str:
    """What the simulator saw that explains a wrong one-warp sum, or the usual suspects."""
    import cudasim_shim

    wide = sorted(cudasim_shim.WIDE_OFFSETS, reverse=True)
    if wide:
        return (
            f"shuffle offset {wide[0]} is outside 1..31: shfl_down_sync by {wide[0]} does not "
            "read another lane (PTX keeps the offset's low 5 bits: 32 reads the lane's own "
            "value, which is then added twice); use offsets 16, 8, 4, 2, 1"
        )
    return (
        "Check the shuffle offsets and mask (shfl_down_sync(FULL_MASK, v, o) for o = 16, 8, 4, "
        "2, 1 sums 32 lanes into lane 0) and that the warp reads only values written in this "
        "launch"
    )


# (n, blocks, threads), called one after another on the same module, the grid shrinking:
# more blocks than threads (pass 2 must loop over the partial sums), then smaller grids
# (nothing may be left over from an earlier call).
OTHER_GRIDS = [(3000, 40, 32), (1000, 3, 64), (300, 2, 128), (97, 1, 32)]


def test_other_grids_one_after_another(reduce_sum: ReduceSum, cuda: ModuleType) -> None:
    """Threads per block is a parameter (any power of two from 32 to 1024), blocks may exceed
    threads, and every call starts afresh."""
    done: list[str] = []
    for n, blocks, threads in OTHER_GRIDS:
        try:
            check_sum(reduce_sum, cuda, random_data(n, seed=threads), blocks, threads, runs=1)
        except AssertionError as exc:
            if blocks > threads:
                raise AssertionError(
                    f"{exc}; with more blocks than threads, pass 2 (one block) must add "
                    "several partial sums per thread (loop over them like pass 1 does)"
                ) from None
            raise AssertionError(
                f"{exc}; it ran after {', '.join(done)} in the same module: is a buffer, "
                "size or count kept from an earlier call? Each call reduces its own partials"
            ) from None
        done.append(f"reduce_sum(n={n}, blocks={blocks}, threads={threads})")


@pytest.mark.parametrize("n", [4099, 1000])
def test_structure_in_the_simulator(
    reduce_sum: ReduceSum, cuda: ModuleType, device: str, n: int
) -> None:
    """Two blocks of 64 threads, watched by the simulator: pass 2 on the GPU, no float
    atomics, a threadfence before a last-block ticket, coalesced grid-stride loads."""
    if device != "cpu":
        pytest.skip("checked in the simulator (CPU run)")
    import cudasim_audit

    data = random_data(n, seed=11)
    blocks, threads = 2, 64
    x = cuda.to_device(data)
    call = f"reduce_sum(x, blocks={blocks}, threads={threads}) with n={n}"
    with cudasim_audit.recording(x) as seen:
        try:
            result = reduce_sum(x, blocks, threads)
        except Exception as exc:
            pytest.fail(f"{call} failed: {describe_failure(exc)}", pytrace=False)
    explain_structure(call, seen, blocks, threads)
    check_close(call, float(result), data)


def explain_structure(call: str, seen: Any, blocks: int, threads: int) -> None:
    """Fail with the README rule the recorded call broke, if any."""
    if seen.launches and seen.launches[0] != (blocks, threads):
        got_blocks, got_threads = seen.launches[0]
        pytest.fail(
            f"{call}: pass 1 launched {got_blocks} block(s) of {got_threads} threads, not the "
            f"{blocks} x {threads} asked for: README: launch pass 1 with blocks x threads "
            "(the caller picks the grid; a kernel that ignores it cannot be tuned)",
            pytrace=False,
        )
    if seen.float_atomics:
        pytest.fail(
            f"{call} used a float cuda.atomic.add on global memory ({seen.float_atomics[0]}): "
            "on a GPU the blocks add in a different order every run and the bits change. "
            "README: finishing with float atomicAdd across blocks is not allowed; reduce the "
            "partial sums in a second pass",
            pytrace=False,
        )
    if seen.unfenced_atomics:
        pytest.fail(
            f"{call}: a thread stored to global memory and then took an atomic ticket with no "
            f"cuda.threadfence() in between ({seen.unfenced_atomics[0]}): on a GPU the last "
            "block may read a partial sum that is not visible yet. Store the partial, "
            "cuda.threadfence(), then cuda.atomic.add the ticket",
            pytrace=False,
        )
    if seen.host_values > 1:
        pytest.fail(
            f"{call} copied {seen.host_values} values from the GPU to the host: reduce the "
            "partials on the GPU (pass 2: one block over the partial sums) and copy back "
            "only the final sum",
            pytrace=False,
        )
    if blocks > 1 and len(seen.launches) < 2 and not seen.atomics:
        pytest.fail(
            f"{call} launched {len(seen.launches)} kernel(s) and no block combined the "
            f"{blocks} partial sums: pass 2 (one block over the partials) must run on the GPU",
            pytrace=False,
        )
    if (where := seen.block_chunked()) is not None:
        pytest.fail(
            f"{call}: each block sums its own chunk of x, not a grid-stride loop: {where}. "
            "README step 1: thread i adds x[i], x[i + gridsize], x[i + 2*gridsize], ... with "
            "gridsize = blocks * threads",
            pytrace=False,
        )
    if (where := seen.uncoalesced()) is not None:
        pytest.fail(
            f"{call}: uncoalesced loads, not a grid-stride loop: {where}. Neighbouring "
            "threads must read neighbouring addresses: thread i adds x[i], x[i + gridsize], "
            "x[i + 2*gridsize], ... (README step 1)",
            pytrace=False,
        )


def check_close(call: str, got: float, data: np.ndarray) -> None:
    expected = float(data.astype(np.float64).sum())
    tol = tolerance(data)
    assert abs(got - expected) <= tol, (
        f"wrong sum for {call}: got {got!r}, expected {expected!r} (tolerance {tol:.3g})"
    )


def test_negative_values(reduce_sum: ReduceSum, cuda: ModuleType, device: str) -> None:
    data = -np.random.default_rng(7).uniform(1.0, 2.0, 3000).astype(np.float32)
    check_sum(reduce_sum, cuda, data, *grid(data.size, device), runs=1)


@pytest.mark.parametrize("n", SIZES)
def test_sum_matches_float64(reduce_sum: ReduceSum, cuda: ModuleType, device: str, n: int) -> None:
    """Mixed-sign data, 3 runs: same bits and within 1e-5*log2(n) of the float64 sum."""
    check_sum(reduce_sum, cuda, random_data(n, seed=n), *grid(n, device), runs=runs(n, device))


def runs(n: int, device: str) -> int:
    """The simulator runs blocks in order and reports shared-memory races, so a second and
    third run of the largest size, on the same grid as 4099, would show nothing new."""
    return 1 if device == "cpu" and n == SIZES[-1] else RUNS


def test_many_ones_exact(reduce_sum: ReduceSum, cuda: ModuleType, device: str) -> None:
    """Every partial sum of ones is an integer < 2^24, so float32 is exact in any order."""
    data = np.ones(ONES[device], np.float32)
    blocks, threads = grid(data.size, device)
    got = run_once(reduce_sum, cuda, data, blocks, threads)
    assert got == float(data.size), (
        f"sum of {data.size} ones with blocks={blocks}, threads={threads} is {got!r}, expected "
        f"exactly {float(data.size)!r}{diagnose(got, data, blocks, threads)}"
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
