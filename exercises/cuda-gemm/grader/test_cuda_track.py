"""Grader for the CUDA C++ track: ``extern "C" void solve(const float* A, const float* B,
float* C, int M, int N, int K)`` in gemm.cu (device pointers, row-major).

CPU (nvcc present, no GPU): compile only for sm_80, nothing runs. Report registers, shared
memory and spills per kernel; check the PTX for a K loop that stages tiles in shared memory
with a barrier between the stores and the loads and between the loads and the next stores;
check the source for barriers under thread-dependent branches, early returns under
thread-dependent branches before a barrier, and allocations. The
last check says what was and was not checked.
GPU: compile for the device, call solve through ctypes on torch CUDA tensors (odd small
shapes and 1024-4096 shapes, NaN after each input and C), and time 4096^3 against
torch.matmul with TF32 off.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import _compare
import _kloop
import cu_build
import cu_source as cu_source_checks
import ptx_checks
import pytest

pytestmark = pytest.mark.track("cuda")

PAD = 64  # NaN floats after A, B and C on the GPU
TRACK = cu_build.CuTrack(
    "gemm.cu",
    signature="const float* A, const float* B, float* C, int M, int N, int K",
    argtypes=(ctypes.c_void_p,) * 3 + (ctypes.c_int,) * 3,
    gpu_export='extern "C" void solve(...) (README: interface)',
)
cu_source, sm80_build, kernels, gpu_library = TRACK.fixtures()


def test_compiles_and_exports_solve(sm80_build: ptx_checks.Build, record_metric) -> None:
    TRACK.check_exports_solve(sm80_build, record_metric)


def test_tiles_staged_in_shared_memory(kernels: list[ptx_checks.Kernel]) -> None:
    if not any(k_loops := [_kloop.k_loops(k) for k in kernels]):
        uses_shared = any(_kloop._events(k.lines) for k in kernels)
        pytest.fail(
            "no K loop stages tiles in shared memory: "
            + (
                "no loop both loads global memory and stores to and loads from shared "
                "memory (st.shared / ld.shared)"
                if uses_shared
                else "the PTX has no shared-memory loads or stores at all (ld.shared / "
                "st.shared), so every thread reads its whole row of A and column of B from "
                "global memory: no data reuse"
            )
            + ". README: in each step of the K loop the block copies one tile of A and one "
            "of B into __shared__ arrays and every thread reads them from there",
            pytrace=False,
        )
    assert k_loops


def test_barriers_around_the_tile_reads(kernels: list[ptx_checks.Kernel]) -> None:
    for kernel in kernels:
        for loop in _kloop.k_loops(kernel):
            gap = _kloop.missing_barrier(kernel, loop)
            if gap == "load-then-store":
                pytest.fail(
                    f"kernel {kernel.name}: in the K loop the next tile is stored to shared "
                    "memory right after the current one is read, with no bar.sync in "
                    "between: fast threads overwrite a tile that slower ones still read. "
                    "Put a second __syncthreads() after the compute loop (README: two "
                    "barriers per step)",
                    pytrace=False,
                )
            if gap == "store-then-load":
                pytest.fail(
                    f"kernel {kernel.name}: in the K loop the tiles are read from shared "
                    "memory right after they are stored, with no bar.sync in between: a "
                    "thread reads elements that others have not stored yet. Put "
                    "__syncthreads() after the tile loads, before the compute loop",
                    pytrace=False,
                )


def test_barriers_reached_by_every_thread(cu_source: Path) -> None:
    message = cu_build.divergent_barriers(
        cu_source,
        cu_source.read_text(encoding="utf-8"),
        ": threads that skip it never reach the barrier (undefined behaviour: a hang or a "
        "silent race). Every thread runs the K loop and its barriers; guard only the loads "
        "(store 0 instead) and the store to C",
    )
    assert not message, message


def test_no_early_return_before_a_barrier(cu_source: Path) -> None:
    found = cu_source_checks.early_returns(cu_source.read_text(encoding="utf-8"))[:3]
    message = "; ".join(
        f"{cu_source.name} line {f.line}: early `return` inside `{f.statement}`, a condition "
        f"that differs between the threads of a block, before the {f.barrier}() at line "
        f"{f.barrier_line}: the threads that return never reach that barrier (README: "
        "undefined behaviour, a hang or a silent race). Every thread runs the K loop and its "
        "barriers; guard only the loads (store 0 instead) and the store to C"
        for f in found
    )
    assert not message, message


def test_no_allocation_per_call(cu_source: Path) -> None:
    message = cu_build.allocation(
        cu_source,
        cu_source.read_text(encoding="utf-8"),
        "per call; solve gets A, B and C on the device and launches the kernel",
    )
    assert not message, message


NOT_RUN_ON_CPU = (
    "compiled and inspected; not run: needs a CUDA GPU (the products, tail tiles, reads "
    "past the edges, speed)"
)


def test_what_a_cpu_run_checked(
    request: pytest.FixtureRequest, device: str, sm80_build: ptx_checks.Build, record_metric
) -> None:
    """On a CPU: how many compile checks passed, and that nothing was run."""
    on_gpu = "ran on the GPU: the checks below ran the kernel"
    cu_build.report_cpu_run(request, device, record_metric, NOT_RUN_ON_CPU, on_gpu)


# ------------------------------------------------------------------------------- GPU


def call_solve(library, A, B, C, M: int, N: int, K: int) -> None:
    library.solve(A.data_ptr(), B.data_ptr(), C.data_ptr(), M, N, K)
    cu_build.synchronize(f"solve(M={M}, N={N}, K={K})")


def check_gpu_product(library, M: int, N: int, K: int, integers: bool) -> None:
    """A, B and C each sit at the start of a NaN-filled buffer PAD floats longer."""
    import torch

    gen = torch.Generator(device="cuda").manual_seed(M * 7 + N * 3 + K)
    if integers:  # exact in float32 in any order
        A = torch.randint(-4, 5, (M, K), device="cuda", generator=gen).float()
        B = torch.randint(-4, 5, (K, N), device="cuda", generator=gen).float()
    else:
        A = torch.randn(M, K, device="cuda", generator=gen)
        B = torch.randn(K, N, device="cuda", generator=gen)
    bufs = [torch.full((n + PAD,), float("nan"), device="cuda") for n in (M * K, K * N, M * N)]
    bufs[0][: M * K] = A.reshape(-1)
    bufs[1][: K * N] = B.reshape(-1)
    call_solve(library, bufs[0], bufs[1], bufs[2], M, N, K)
    where = f"solve(M={M}, N={N}, K={K})"
    if not all(torch.isnan(b[-PAD:]).all() for b in bufs):
        pytest.fail(f"{where} wrote past the end of C (or into A or B)", pytrace=False)
    if not (
        torch.equal(bufs[0][: M * K], A.reshape(-1))
        and torch.equal(bufs[1][: K * N], B.reshape(-1))
    ):
        pytest.fail(f"{where} modified A or B; write only C", pytrace=False)
    got = bufs[2][: M * N].reshape(M, N).cpu().numpy()
    wrong = _compare.problem(
        got, A.cpu().numpy(), B.cpu().numpy(), _compare.GUESS_TILES, exact=integers, gpu=True
    )
    if wrong is not None:
        pytest.fail(f"{where}: {wrong}", pytrace=False)


SMALL = [(1, 1, 1), (5, 7, 1), (1, 77, 33), (77, 1, 33), (31, 33, 65), (100, 37, 129)]
LARGE = [(1024, 1024, 1024), (1031, 2053, 1537), (4096, 1024, 2048)]


@pytest.mark.cuda
@pytest.mark.parametrize(("M", "N", "K"), SMALL, ids=[f"{m}x{n}x{k}" for m, n, k in SMALL])
def test_gpu_small_odd_shapes_exact(gpu_library, M: int, N: int, K: int) -> None:
    check_gpu_product(gpu_library, M, N, K, integers=True)


@pytest.mark.cuda
@pytest.mark.parametrize(("M", "N", "K"), LARGE, ids=[f"{m}x{n}x{k}" for m, n, k in LARGE])
def test_gpu_large_shapes(gpu_library, M: int, N: int, K: int) -> None:
    check_gpu_product(gpu_library, M, N, K, integers=False)


@pytest.mark.cuda
def test_gpu_speed_vs_torch(gpu_library, record_metric) -> None:
    """4096^3: TFLOPS as a fraction of torch.matmul (TF32 off) in the same run."""
    import _bench

    A, B, C = _bench.operands()
    n = _bench.SIZE

    def run() -> None:
        gpu_library.solve(A.data_ptr(), B.data_ptr(), C.data_ptr(), n, n, n)

    passed, message = _bench.measure("solve", run, A, B, C, record_metric)
    assert passed, message
