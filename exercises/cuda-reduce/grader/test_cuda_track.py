"""Grader for the CUDA C++ track: ``extern "C" void solve(const float* in, float* out, int n)``.

CPU (nvcc present, no GPU): compile only for sm_80, nothing runs; report registers, shared
memory and spills per kernel; check the PTX for a grid-stride loop, a barrier in every loop
that reads and writes shared memory, warp shuffles with offsets 16, 8, 4, 2, 1 and no float
atomic add; check the source for barriers under thread-dependent branches and for
allocations. The last check says what was and was not checked.
GPU: compile for the device, call solve through ctypes on torch CUDA tensors (correctness,
three runs with the same bits, NaN after the input's end), compute-sanitizer memcheck and
racecheck when installed, and bandwidth on 2^28 floats against a device-to-device copy.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import cu_build
import ptx_checks
import pytest

pytestmark = pytest.mark.track("cuda")

HERE = Path(__file__).resolve().parent
SIZES = [0, 1, 2, 31, 32, 33, 255, 256, 257, 1000, 4099, 65537, (1 << 20) + 3]
RUNS = 3
PAD = 64
TRACK = cu_build.CuTrack(
    "reduce.cu",
    signature="const float* in, float* out, int n",
    argtypes=(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int),
    gpu_export='extern "C" void solve(const float*, float*, int)',
)
cu_source, sm80_build, kernels, gpu_library = TRACK.fixtures()


def test_compiles_and_exports_solve(sm80_build: ptx_checks.Build, record_metric) -> None:
    TRACK.check_exports_solve(sm80_build, record_metric)


def test_warp_shuffles_present(kernels: list[ptx_checks.Kernel]) -> None:
    assert any(ptx_checks.has_shuffle(k) for k in kernels), (
        "no warp shuffle (shfl.sync) in the PTX: finish the last 32 values of a block with "
        "__shfl_down_sync(0xffffffff, v, offset) instead of shared memory"
    )


def test_barrier_in_shared_memory_loop(kernels: list[ptx_checks.Kernel]) -> None:
    assert any(ptx_checks.has_barrier(k) for k in kernels), (
        "no __syncthreads() (bar.sync) in the PTX: the threads of a block must meet after "
        "writing their sums to shared memory, before others read them"
    )
    for kernel in kernels:
        bad = ptx_checks.unsynchronised_shared_loops(kernel)
        assert not bad, (
            f"kernel {kernel.name}: a loop reads and writes shared memory with no "
            "__syncthreads() (bar.sync) inside it, so one step reads partial sums that other "
            "threads have not written yet; put __syncthreads() after every tree step, outside "
            "the if"
        )


def test_grid_stride_loop(kernels: list[ptx_checks.Kernel]) -> None:
    assert any(ptx_checks.has_grid_stride_loop(k) for k in kernels), (
        "no grid-stride loop: no loop in any kernel loads from global memory, so each thread "
        "reads a fixed number of elements and a fixed-size grid drops the tail of a large "
        "input; loop i += gridDim.x * blockDim.x while i < n"
    )


def test_shuffle_offsets(kernels: list[ptx_checks.Kernel]) -> None:
    offsets = ptx_checks.constant_shuffle_offsets(kernels)
    wrong = sorted({o for o in offsets if not 1 <= o <= 31}, reverse=True)
    assert not wrong, (
        f"shuffle offset(s) {wrong} outside 1..31: in a 32-lane warp a __shfl_down_sync by "
        f"{wrong[0]} does not read lane i + {wrong[0]} (PTX keeps only the offset's low 5 "
        "bits: 32 reads the thread's own value, which is then added twice); start at 16 "
        "(warpSize / 2)"
    )
    if offsets:
        assert 16 in offsets, (
            f"shuffle offsets {sorted(set(offsets), reverse=True)} never include 16: lanes "
            "16-31 never reach lane 0 (a warp sum uses offsets 16, 8, 4, 2, 1)"
        )


def test_no_float_atomic_add(kernels: list[ptx_checks.Kernel]) -> None:
    for kernel in kernels:
        found = ptx_checks.float_atomics(kernel)
        assert not found, (
            f"kernel {kernel.name} adds floats atomically in global memory ({found[0]}): "
            "README: finishing with float atomicAdd across blocks is not allowed (the blocks "
            "add in a different order every run, so the bits change); write one partial sum "
            "per block and reduce them in a second pass"
        )


def test_barriers_reached_by_every_thread(cu_source: Path) -> None:
    message = cu_build.divergent_barriers(
        cu_source,
        cu_source.read_text(encoding="utf-8"),
        ": threads that skip it never reach the barrier (undefined behaviour: a hang or a "
        "silent race). README step 2: every thread reaches every __syncthreads(); put it after "
        "the if",
    )
    assert not message, message


def test_no_allocation_per_call(cu_source: Path) -> None:
    message = cu_build.allocation(
        cu_source,
        cu_source.read_text(encoding="utf-8"),
        "per call; keep the partial sums in a static __device__ float g_partials[MAX_BLOCKS] "
        "and get its address with cudaGetSymbolAddress",
    )
    assert not message, message


NOT_RUN_ON_CPU = (
    "compiled and inspected; not run: needs a CUDA GPU (the sums, n = 0, reads past the end, "
    "misaligned float4 loads, compute-sanitizer, bandwidth)"
)


def test_what_a_cpu_run_checked(
    request: pytest.FixtureRequest, device: str, sm80_build: ptx_checks.Build, record_metric
) -> None:
    """On a CPU: how many compile checks passed, and that nothing was run."""
    on_gpu = "ran on the GPU: every check above ran the kernel"
    cu_build.report_cpu_run(request, device, record_metric, NOT_RUN_ON_CPU, on_gpu)


# ------------------------------------------------------------------------------- GPU


def call_solve(library, x, out) -> None:
    library.solve(x.data_ptr(), out.data_ptr(), x.numel())
    cu_build.synchronize(f"solve(n={x.numel()})")


def check_gpu_sum(library, data, offset: int = 0) -> None:
    """data: CUDA float32 tensor. Calls solve RUNS times on a NaN-padded copy."""
    import gpu_bench
    import torch

    n = data.numel()
    buffer = torch.full((offset + n + PAD,), float("nan"), device="cuda")
    buffer[offset : offset + n] = data
    x = buffer[offset : offset + n]
    expected = float(torch.sum(data, dtype=torch.float64))
    tol = gpu_bench.tolerance(n, float(torch.sum(data.abs(), dtype=torch.float64)))
    results = []
    for _ in range(RUNS):
        out = torch.full((1,), float("nan"), device="cuda")  # fresh, not zeroed
        call_solve(library, x, out)
        results.append(float(out.item()))
    where = f"n={n}" + (f" (input pointer offset by {4 * offset} bytes)" if offset else "")
    for got in results:
        if got != got:  # NaN
            pytest.fail(
                f"solve({where}) left NaN in out[0]: it did not write out[0], or it read past "
                "the end of the input (the grader puts NaN after in[n-1])",
                pytrace=False,
            )
        assert abs(got - expected) <= tol, (
            f"wrong sum for {where}: got {got!r}, expected {expected!r} (tolerance {tol:.3g})"
        )
    assert len(set(results)) == 1, (
        f"results differ between {RUNS} runs for {where}: {results}; a race (missing "
        "__syncthreads()?) or float atomicAdd across blocks, whose order changes the rounding"
    )
    assert torch.isnan(buffer[offset + n :]).all(), f"solve({where}) wrote past the input"


@pytest.mark.cuda
@pytest.mark.parametrize("n", SIZES)
def test_gpu_sum(gpu_library, n: int) -> None:
    import torch

    gen = torch.Generator(device="cuda").manual_seed(n)
    check_gpu_sum(gpu_library, torch.randn(n, device="cuda", generator=gen))


@pytest.mark.cuda
def test_gpu_edge_values(gpu_library) -> None:
    import torch

    check_gpu_sum(gpu_library, -torch.rand(3000, device="cuda") - 1.0)  # all negative
    ones = torch.ones(1_000_000, device="cuda")
    out = torch.full((1,), float("nan"), device="cuda")
    call_solve(gpu_library, ones, out)
    assert float(out.item()) == 1_000_000.0, f"sum of 1e6 ones is {out.item()!r}, not exact"
    check_gpu_sum(gpu_library, torch.randn(4099, device="cuda"), offset=1)  # not 16-B aligned


@pytest.mark.cuda
@pytest.mark.parametrize("tool", ["memcheck", "racecheck", "synccheck"])
def test_gpu_sanitizer(cu_source: Path, tmp_path: Path, device: str, tool: str) -> None:
    """compute-sanitizer on a stand-alone driver: out-of-bounds accesses, shared-memory races
    and divergent barriers are reported with the thread and block ids."""
    sanitizer, binary = cu_build.sanitizer_driver(HERE / "harness.cu", cu_source, tmp_path)
    for n in (1000, 4099):
        returncode, problems, _output = cu_build.sanitize(sanitizer, tool, binary, n)
        what = {
            "memcheck": "out-of-bounds access",
            "racecheck": "shared-memory race",
            "synccheck": "barrier not reached by every thread (__syncthreads() in an if)",
        }[tool]
        assert returncode == 0, (
            f"compute-sanitizer --tool {tool} (n={n}) found a {what}:\n" + "\n".join(problems[:12])
        )


@pytest.mark.cuda
def test_gpu_bandwidth(gpu_library, record_metric) -> None:
    """2^28 floats: median of 25 runs >= 50% of device-to-device copy bandwidth."""
    import gpu_bench
    import torch

    x = torch.rand(gpu_bench.N, device="cuda")
    expected = float(torch.sum(x, dtype=torch.float64))
    tol = gpu_bench.tolerance(gpu_bench.N, expected)
    copy, torch_sum = gpu_bench.baselines(x)
    outs = [torch.full((1,), float("nan"), device="cuda") for _ in range(gpu_bench.RUNS)]
    scratch = torch.empty(1, device="cuda")

    def run(i: int):
        out = outs[i] if i >= 0 else scratch
        gpu_library.solve(x.data_ptr(), out.data_ptr(), x.numel())
        return out

    timing = gpu_bench.time_runs(run)
    torch.cuda.synchronize()
    values = [float(o.item()) for o in timing.results]
    bad = [v for v in values if not abs(v - expected) <= tol]
    assert not bad, f"timed runs returned wrong sums {bad[:3]} (expected {expected!r} +- {tol:.3g})"
    assert len(set(values)) == 1, f"timed runs differ: {sorted(set(values))[:4]}"
    passed, message = gpu_bench.verdict("solve", timing, copy, torch_sum, record_metric)
    assert passed, message
