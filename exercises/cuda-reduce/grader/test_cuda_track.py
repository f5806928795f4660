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
import os
import shutil
import subprocess
from pathlib import Path

import cu_source as cu_source_checks
import ptx_checks
import pytest

pytestmark = pytest.mark.track("cuda")

HERE = Path(__file__).resolve().parent
SIZES = [0, 1, 2, 31, 32, 33, 255, 256, 257, 1000, 4099, 65537, (1 << 20) + 3]
RUNS = 3
PAD = 64


@pytest.fixture(scope="session")
def cu_source(solution_path: Path) -> Path:
    if solution_path.suffix != ".cu":
        pytest.skip(f"CUDA C++ track: expects a .cu file, got {solution_path.name}")
    return solution_path


@pytest.fixture(scope="session")
def sm80_build(cu_source: Path, tmp_path_factory: pytest.TempPathFactory) -> ptx_checks.Build:
    if ptx_checks.nvcc() is None:
        pytest.skip("nvcc not found: install the CUDA toolkit to check the CUDA C++ track")
    return ptx_checks.compile_cu(cu_source, tmp_path_factory.mktemp("sm80"))


@pytest.fixture
def kernels(sm80_build: ptx_checks.Build) -> list[ptx_checks.Kernel]:
    if not sm80_build.ok:
        pytest.fail(
            "nvcc could not compile reduce.cu:\n" + ptx_checks.compile_errors(sm80_build.log)
        )
    found = ptx_checks.kernels(sm80_build.ptx)
    if not found:
        pytest.fail("reduce.cu defines no __global__ kernel")
    return found


def test_compiles_and_exports_solve(sm80_build: ptx_checks.Build, record_metric) -> None:
    assert sm80_build.ok, "nvcc could not compile reduce.cu:\n" + ptx_checks.compile_errors(
        sm80_build.log
    )
    assert sm80_build.library is not None
    library = ctypes.CDLL(str(sm80_build.library))
    assert hasattr(library, "solve"), (
        'reduce.cu must export extern "C" void solve(const float* in, float* out, int n) '
        '(without extern "C" the name is C++-mangled and cannot be called)'
    )
    for mangled, res in ptx_checks.resources(sm80_build.log).items():
        name = ptx_checks.short_name(mangled)
        record_metric(f"{name} registers", res.registers, "registers/thread")
        record_metric(f"{name} shared memory", res.smem_bytes, "bytes/block")
        record_metric(f"{name} spills", res.spill_bytes, "bytes")


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
    offsets: list[int] = []
    for kernel in kernels:
        known, _unknown = ptx_checks.shuffle_offsets(kernel)
        offsets += known
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
    findings = cu_source_checks.divergent_barriers(cu_source.read_text(encoding="utf-8"))
    assert not findings, "; ".join(
        f"{cu_source.name} line {f.line}: {f.barrier}() is inside `{f.statement}`, a condition "
        "that differs between the threads of a block: threads that skip it never reach the "
        "barrier (undefined behaviour: a hang or a silent race). README step 2: every "
        "thread reaches every __syncthreads(); put it after the if"
        for f in findings[:3]
    )


def test_no_allocation_per_call(cu_source: Path) -> None:
    found = cu_source_checks.allocations(cu_source.read_text(encoding="utf-8"))
    assert not found, (
        f"{cu_source.name} line {found[0][0]} calls {found[0][1]}: README: allocate nothing "
        "per call; keep the partial sums in a static __device__ float g_partials[MAX_BLOCKS] "
        "and get its address with cudaGetSymbolAddress"
    )


NOT_RUN_ON_CPU = (
    "compiled and inspected; not run: needs a CUDA GPU (the sums, n = 0, reads past the end, "
    "misaligned float4 loads, compute-sanitizer, bandwidth)"
)


def test_what_a_cpu_run_checked(
    request: pytest.FixtureRequest, device: str, sm80_build: ptx_checks.Build, record_metric
) -> None:
    """On a CPU: how many compile checks passed, and that nothing was run."""
    if device != "cpu":
        pytest.skip("ran on the GPU: every check above ran the kernel")
    outcomes = request.config.stash.get(ptx_checks.OUTCOMES, {})
    ran = {k: v for k, v in outcomes.items() if "test_cuda_track.py::" in k and v != "skipped"}
    ran.pop(request.node.nodeid, None)
    passed = sum(v == "passed" for v in ran.values())
    verdict = "compile checks passed" if passed == len(ran) else "compile checks failed"
    record_metric(f"{verdict}; {NOT_RUN_ON_CPU}", passed, f"of {len(ran)} checks")


# ------------------------------------------------------------------------------- GPU


@pytest.fixture(scope="session")
def gpu_library(cu_source: Path, tmp_path_factory: pytest.TempPathFactory, device: str):
    if device != "cuda":
        pytest.skip("needs a CUDA GPU (running on cpu)")
    if ptx_checks.nvcc() is None:
        pytest.skip("nvcc not found: install the CUDA toolkit to build reduce.cu")
    build = ptx_checks.compile_cu(cu_source, tmp_path_factory.mktemp("native"), arch="native")
    if not build.ok:
        pytest.fail("nvcc could not compile reduce.cu:\n" + ptx_checks.compile_errors(build.log))
    library = ctypes.CDLL(str(build.library))
    if not hasattr(library, "solve"):
        pytest.fail('reduce.cu must export extern "C" void solve(const float*, float*, int)')
    library.solve.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
    library.solve.restype = None
    return library


def call_solve(library, x, out) -> None:
    import torch

    library.solve(x.data_ptr(), out.data_ptr(), x.numel())
    try:
        torch.cuda.synchronize()
    except RuntimeError as exc:  # a fault inside the kernel
        pytest.fail(f"solve(n={x.numel()}) failed on the GPU: {exc}", pytrace=False)


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


def _sanitizer() -> str | None:
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    nvcc = ptx_checks.nvcc()
    if nvcc:
        roots.append(str(Path(os.path.realpath(nvcc)).parent.parent))
    for root in filter(None, roots):
        for candidate in (Path(root) / "bin", Path(root) / "compute-sanitizer"):
            if (candidate / "compute-sanitizer").is_file():
                return str(candidate / "compute-sanitizer")
    return None


@pytest.mark.cuda
@pytest.mark.parametrize("tool", ["memcheck", "racecheck", "synccheck"])
def test_gpu_sanitizer(cu_source: Path, tmp_path: Path, device: str, tool: str) -> None:
    """compute-sanitizer on a stand-alone driver: out-of-bounds accesses, shared-memory races
    and divergent barriers are reported with the thread and block ids."""
    sanitizer = _sanitizer()
    if sanitizer is None or ptx_checks.nvcc() is None:
        pytest.skip("compute-sanitizer (CUDA toolkit) not found")
    binary = tmp_path / "harness"
    build = subprocess.run(
        [
            ptx_checks.nvcc(),
            "-arch=native",
            "-O2",
            "-lineinfo",
            "-o",
            str(binary),
            str(HERE / "harness.cu"),
            str(cu_source),
        ],
        capture_output=True,
        text=True,
        timeout=ptx_checks.COMPILE_TIMEOUT_S,
    )
    assert build.returncode == 0, "nvcc could not build the sanitizer driver:\n" + (
        ptx_checks.compile_errors(build.stdout + build.stderr)
    )
    for n in (1000, 4099):
        run = subprocess.run(
            [sanitizer, "--tool", tool, "--error-exitcode", "99", str(binary), str(n)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        report = [ln for ln in (run.stdout + run.stderr).splitlines() if ln.startswith("=========")]
        problems = [ln for ln in report if "ERROR SUMMARY" not in ln and ln.strip("= ")]
        what = {
            "memcheck": "out-of-bounds access",
            "racecheck": "shared-memory race",
            "synccheck": "barrier not reached by every thread (__syncthreads() in an if)",
        }[tool]
        assert run.returncode == 0, (
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
