"""Grader for the CUDA C++ track: ``extern "C" void solve(const float* x, float* y, int rows,
int cols)`` in softmax.cu.

CPU (nvcc present, no GPU): compile only for sm_80, nothing runs; report registers, shared
memory and spills per kernel; check the PTX for warp shuffles with offsets 16, 8, 4, 2, 1, a
loop that loads global memory (rows longer than the block), and a barrier between every
store to shared memory and the loads that read it; check the source for exp of a
difference (x - m), barriers under thread-dependent branches, early returns under
thread-dependent branches before a barrier, and allocations. The last
check says what was and was not checked.
GPU: compile for the device, call solve through ctypes on torch CUDA tensors (the same
cases as the numba track, with NaN after the input and a sentinel in the output), and time
it against torch.softmax.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import _cu_checks
import _rows
import cu_build
import cu_source as cu_source_checks
import numpy as np
import ptx_checks
import pytest
from _rows import Case

pytestmark = pytest.mark.track("cuda")


TRACK = cu_build.CuTrack(
    "softmax.cu",
    signature="const float* x, float* y, int rows, int cols",
    argtypes=(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int),
    gpu_export='extern "C" void solve(const float*, float*, int, int)',
)
cu_source, sm80_build, kernels, gpu_library = TRACK.fixtures()


@pytest.fixture(scope="session")
def source_text(cu_source: Path) -> str:
    return cu_source.read_text(encoding="utf-8")


STARTER_MARKER = "SOFTMAX_NOT_IMPLEMENTED"


def test_starter_marker_removed(cu_source: Path, source_text: str) -> None:
    if STARTER_MARKER in cu_source_checks.strip(source_text):
        pytest.fail(
            f"not implemented: {cu_source.name} still defines {STARTER_MARKER} (the starter's "
            "marker); write the kernel and solve(), then delete that line",
            pytrace=False,
        )


def test_compiles_and_exports_solve(sm80_build: ptx_checks.Build, record_metric: Any) -> None:
    TRACK.check_exports_solve(sm80_build, record_metric)


def test_warp_shuffles_present(kernels: list[ptx_checks.Kernel]) -> None:
    assert any(ptx_checks.has_shuffle(k) for k in kernels), (
        "no warp shuffle (shfl.sync) in the PTX: merge the (m, d) states of a warp with "
        "__shfl_down_sync / __shfl_xor_sync(0xffffffff, value, offset)"
    )


def test_shuffle_offsets(kernels: list[ptx_checks.Kernel]) -> None:
    offsets = ptx_checks.constant_shuffle_offsets(kernels)
    wrong = sorted({o for o in offsets if not 1 <= o <= 31}, reverse=True)
    assert not wrong, (
        f"shuffle offset(s) {wrong} outside 1..31: in a 32-lane warp a shuffle by {wrong[0]} "
        "does not read another lane (PTX keeps only the offset's low 5 bits: 32 reads the "
        "thread's own state, which is then merged twice); start at 16 (warpSize / 2)"
    )
    if offsets:
        assert 16 in offsets, (
            f"shuffle offsets {sorted(set(offsets), reverse=True)} never include 16: the "
            "states of lanes 16-31 never meet those of lanes 0-15 (use 16, 8, 4, 2, 1)"
        )


def test_exp_of_a_difference(cu_source: Path, source_text: str) -> None:
    calls = _cu_checks.exp_calls(source_text)
    assert calls, (
        f"{cu_source.name} calls no expf / __expf: the softmax needs exp(x - m) with m the "
        "running max"
    )
    bare = [c for c in calls if not c.difference]
    assert not bare, (
        f"{cu_source.name} line {bare[0].line}: {bare[0].text} is not exp of a difference: "
        "subtract the running max first (expf(v - m), and expf(m_old - m_new) for the rescale); "
        "float32 exp(x) is inf above x = 88.7, so a row with values of 1e4 becomes inf / inf "
        "= NaN"
    )


def test_barriers_reached_by_every_thread(cu_source: Path, source_text: str) -> None:
    message = cu_build.divergent_barriers(
        cu_source,
        source_text,
        ": threads that skip it never reach the barrier (undefined behaviour: a hang or a "
        "silent race). Every thread must reach every __syncthreads(); put it after the if",
    )
    assert not message, message


def test_no_early_return_before_a_barrier(cu_source: Path, source_text: str) -> None:
    message = "; ".join(
        f"{cu_source.name} line {f.line}: early `return` inside `{f.statement}`, a condition "
        f"that differs between the threads of a block, before the {f.barrier}() at line "
        f"{f.barrier_line}: the threads that return never reach that barrier (undefined "
        "behaviour: a hang or a silent race). Every thread of the block must reach every "
        "__syncthreads(); let threads without columns skip the loops, not return"
        for f in cu_source_checks.early_returns(source_text)[:3]
    )
    assert not message, message


def test_barrier_between_shared_store_and_load(kernels: list[ptx_checks.Kernel]) -> None:
    for kernel in kernels:
        found = _cu_checks.unsynchronised_handoffs(kernel)
        assert not found, (
            f"kernel {kernel.name}: shared memory is read ({found[0]}) after a store to shared "
            "memory with no __syncthreads() (bar.sync) in between: the first warp reads the "
            "other warps' (m, d) states before they are written. Put __syncthreads() after the "
            "warps store their states, and after the final (M, D) is stored, before any "
            "thread reads it"
        )


def test_loop_over_the_row(kernels: list[ptx_checks.Kernel]) -> None:
    assert any(ptx_checks.has_grid_stride_loop(k) for k in kernels), (
        "no loop in any kernel loads from global memory, so each thread reads a fixed number "
        "of columns and a row longer than the block is cut short; loop j = threadIdx.x, "
        "j + blockDim.x, ... while j < cols"
    )


def test_no_allocation_per_call(cu_source: Path, source_text: str) -> None:
    message = cu_build.allocation(
        cu_source,
        source_text,
        "per call (a block keeps its row's state in shared memory and registers)",
    )
    assert not message, message


NOT_RUN_ON_CPU = (
    "compiled and inspected; not run: needs a CUDA GPU (the values, rows of -inf, the tail, "
    "reads past the end, one pass over x, bandwidth against torch.softmax)"
)


def test_what_a_cpu_run_checked(
    request: pytest.FixtureRequest, device: str, sm80_build: ptx_checks.Build, record_metric: Any
) -> None:
    """On a CPU: how many compile checks passed, and that nothing was run."""
    on_gpu = "ran on the GPU: the checks below ran the kernel"
    cu_build.report_cpu_run(request, device, record_metric, NOT_RUN_ON_CPU, on_gpu)


# ------------------------------------------------------------------------------- GPU


def gpu_run(library: Any, x: np.ndarray) -> np.ndarray:
    """solve on padded CUDA copies of ``x``; returns y (host)."""
    import torch

    rows, cols = x.shape
    x_pad = torch.full((rows + 1, cols), float("nan"), device="cuda")
    x_pad[:rows] = torch.from_numpy(x).cuda()
    y_pad = torch.full((rows + 1, cols), _rows.SENTINEL, device="cuda")
    before = x_pad.clone()
    library.solve(x_pad.data_ptr(), y_pad.data_ptr(), rows, cols)
    call = f"solve(x, y, rows={rows}, cols={cols})"
    cu_build.synchronize(call)
    if not torch.equal(torch.nan_to_num(x_pad, 1.0), torch.nan_to_num(before, 1.0)):
        pytest.fail(f"{call} modified its input x; write only y", pytrace=False)
    if not bool((y_pad[rows] == _rows.SENTINEL).all()):
        pytest.fail(f"{call} wrote past the end of y (row {rows} does not exist)", pytrace=False)
    return y_pad[:rows].cpu().numpy()


GPU_CASES = [
    Case("short rows", _rows.small_rows(), 0),
    Case("a single column (every output is 1)", _rows.single_column(), 0),
    Case("large magnitudes, |x| up to 1e4", _rows.large_magnitude(), 0),
    Case("rows of only -inf (output zeros)", _rows.all_neg_inf_rows(), 0),
    Case("rows with some -inf", _rows.some_neg_inf(256), 0),
    Case("cols not a multiple of 32", _rows.random_rows(5, 1000, seed=1000), 0),
    Case("long rows", _rows.random_rows(3, 50_000, seed=5, scale=10.0), 0),
    Case("many short rows", _rows.random_rows(70_000, 3, seed=3), 0),
]


@pytest.mark.cuda
@pytest.mark.parametrize("case", GPU_CASES, ids=[c.name for c in GPU_CASES])
def test_gpu_rows(gpu_library: Any, case: Case) -> None:
    y = gpu_run(gpu_library, case.x)
    try:
        _rows.check(case.x, y, f"{case.name} ({case.shape})")
    except AssertionError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.mark.cuda
def test_gpu_fuzz_smallest_failure_first(gpu_library: Any) -> None:
    for case in _rows.fuzz_cases(count=24, seed=2024, threads=(0,), max_cols=5000):
        y = gpu_run(gpu_library, case.x)
        try:
            _rows.check(case.x, y, f"{case.name} ({case.shape})")
        except AssertionError as exc:
            pytest.fail(str(exc), pytrace=False)


@pytest.mark.cuda
def test_gpu_bandwidth(gpu_library: Any, record_metric: Any) -> None:
    """[32768, 4096] float32: time against torch.softmax in the same run."""
    import _gpu_bench
    import torch

    x = _gpu_bench.bench_input()
    y = torch.empty_like(x)

    def call() -> None:
        gpu_library.solve(x.data_ptr(), y.data_ptr(), _gpu_bench.ROWS, _gpu_bench.COLS)

    timing = _gpu_bench.time_runs(call)
    _gpu_bench.check_output(x, y)
    passed, message = _gpu_bench.verdict("solve", timing, x, record_metric)
    assert passed, message
