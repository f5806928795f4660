"""Grader for the CUDA C++ track:
``extern "C" void solve(const float* in, float* out, int rows, int cols)``.

CPU (nvcc present, no GPU): compile only for sm_80, nothing runs. The source's shared tile
must be free of bank conflicts when a column of it is read (padded to an odd row length, or
XOR-swizzled); the PTX must store to and load from shared memory with a barrier
(``bar.sync``) between them; no ``__syncthreads()`` may sit under a thread-dependent branch,
and nothing is allocated.
Registers, shared memory and spills are reported per kernel, and the last check says what
was and was not checked.
GPU: compile for the device, call solve through ctypes on torch CUDA tensors (exact results
on odd shapes, NaN sentinels around the output to catch out-of-bounds and missing stores),
compute-sanitizer when installed, and bandwidth against a copy of the same bytes.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path
from typing import Any

import _tile_source
import cu_build
import cu_source as cu_source_checks
import ptx_checks
import pytest

pytestmark = pytest.mark.track("cuda")

HERE = Path(__file__).resolve().parent
NOT_DONE = "// I AM NOT DONE"
SENTINEL = 0x7FC0DEAD  # a quiet NaN: "never written"
PAD = 64  # sentinel floats after each buffer
SHAPES = [(1, 1), (32, 32), (1, 70), (70, 1), (33, 65), (65, 33), (1000, 1999), (4097, 3)]
SANITIZER_SHAPES = [(33, 65), (70, 1)]
_SHARED_ST = re.compile(r"\bst(?:\.\w+)*\.shared\b")
_SHARED_LD = re.compile(r"\bld(?:\.\w+)*\.shared\b")
Metric = cu_build.Metric  # the record_metric fixture
TRACK = cu_build.CuTrack(
    "transpose.cu",
    signature="const float* in, float* out, int rows, int cols",
    argtypes=(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int),
    gpu_export='extern "C" void solve(const float*, float*, int, int)',
)
cu_source, sm80_build, kernels, gpu_library = TRACK.fixtures()


def test_starter_marker_removed(cu_source: Path) -> None:
    """Like rustlings: the starter carries a marker line to delete when done."""
    lines = cu_source.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if line.strip() == NOT_DONE:
            pytest.fail(
                f"not implemented yet: {cu_source.name} line {number} still has the starter's "
                f"`{NOT_DONE}` line; implement the kernel and solve(), then delete that line",
                pytrace=False,
            )


def test_compiles_and_exports_solve(sm80_build: ptx_checks.Build, record_metric: Metric) -> None:
    """nvcc builds it for sm_80 and the library exports solve with C linkage."""
    TRACK.check_exports_solve(sm80_build, record_metric)


def test_shared_tile_without_bank_conflicts(cu_source: Path) -> None:
    """A __shared__ float tile whose columns span all 32 banks (padded or swizzled)."""
    source = cu_source.read_text(encoding="utf-8")
    found = _tile_source.tiles(source)
    assert found, (
        f"{cu_source.name} declares no __shared__ tile: a transpose without shared memory "
        "makes either the loads or the stores uncoalesced (a warp then touches 32 rows of "
        "one matrix); stage each tile in a __shared__ float tile[TILE][TILE + 1]"
    )
    problems = [f"{cu_source.name} line {t.line}: {why}" for t in found if (why := t.verdict())]
    assert not problems, "; ".join(problems)
    unknown = [t for t in found if t.degree == 0]
    assert not unknown, (
        f"{cu_source.name} line {unknown[0].line}: cannot evaluate the size of "
        f"__shared__ float {unknown[0].declaration}; use integer literals or constants "
        "(#define / constexpr int) in the declaration"
    )


def test_tile_goes_through_shared_memory(kernels: list[ptx_checks.Kernel]) -> None:
    """The PTX stores to and loads from shared memory."""
    stores = any(_SHARED_ST.search(ln) for k in kernels for ln in k.lines)
    loads = any(_SHARED_LD.search(ln) for k in kernels for ln in k.lines)
    assert stores and loads, (
        "the PTX has no "
        + ("st.shared" if not stores else "ld.shared")
        + ": the tile is declared but the kernel does not both store the tile to shared "
        "memory and read it back (a naive transpose has uncoalesced loads or stores)"
    )


def test_barrier_between_tile_store_and_load(kernels: list[ptx_checks.Kernel]) -> None:
    """A bar.sync between the shared-memory store and load."""
    ok = []
    for kernel in kernels:
        stores = [i for i, ln in enumerate(kernel.lines) if _SHARED_ST.search(ln)]
        loads = [i for i, ln in enumerate(kernel.lines) if _SHARED_LD.search(ln)]
        if not stores or not loads:
            continue
        between = ptx_checks.Kernel(kernel.name, kernel.lines[stores[0] : loads[-1] + 1])
        ok.append(ptx_checks.has_barrier(between))
    assert ok and all(ok), (
        "no __syncthreads() (bar.sync) between the tile store and the tile load in the PTX: "
        "a thread reads back elements of the tile that other threads store, so every thread "
        "of the block must wait at a barrier after storing its part of the tile"
    )


def test_barriers_reached_by_every_thread(cu_source: Path) -> None:
    """No __syncthreads() under a branch whose condition depends on the thread."""
    message = cu_build.divergent_barriers(
        cu_source,
        cu_source.read_text(encoding="utf-8"),
        " (at an edge tile some threads are out of bounds): threads that skip it never reach "
        "the barrier (undefined behaviour: a hang or a silent race); guard only the load and "
        "the store, and put __syncthreads() where every thread reaches it",
    )
    assert not message, message


def test_no_allocation(cu_source: Path) -> None:
    """solve allocates nothing: a transpose needs no scratch buffer in global memory."""
    message = cu_build.allocation(
        cu_source,
        cu_source.read_text(encoding="utf-8"),
        "(the tile lives in __shared__ memory; in and out are the caller's buffers)",
    )
    assert not message, message


def test_no_early_return_before_a_barrier(cu_source: Path) -> None:
    """No `return` under a thread-dependent condition before a __syncthreads()."""
    found = cu_source_checks.early_returns(cu_source.read_text(encoding="utf-8"))[:3]
    message = "; ".join(
        f"{cu_source.name} line {f.line}: early `return` inside `{f.statement}`, a condition "
        f"that differs between the threads of a block, before the {f.barrier}() at line "
        f"{f.barrier_line}: the threads that return never reach that barrier (undefined "
        "behaviour: a hang or a silent race). Every thread reaches the barrier; guard only "
        "the tile load and the store"
        for f in found
    )
    assert not message, message


NOT_RUN_ON_CPU = (
    "compiled and inspected; not run: needs a CUDA GPU (results on odd shapes, out-of-bounds "
    "accesses, coalescing as measured bandwidth, compute-sanitizer)"
)


def test_what_a_cpu_run_checked(
    request: pytest.FixtureRequest,
    device: str,
    sm80_build: ptx_checks.Build,
    record_metric: Metric,
) -> None:
    """On a CPU: how many compile checks passed, and that nothing was run."""
    on_gpu = "ran on the GPU: the checks below ran the kernel"
    cu_build.report_cpu_run(request, device, record_metric, NOT_RUN_ON_CPU, on_gpu)


# ------------------------------------------------------------------------------- GPU


def call_solve(library: ctypes.CDLL, x: Any, out: Any, rows: int, cols: int) -> None:
    """solve(x, out, rows, cols) and wait for it; a fault fails the check."""
    library.solve(x.data_ptr(), out.data_ptr(), rows, cols)
    cu_build.synchronize(f"solve(rows={rows}, cols={cols})")


def sentinel_buffer(n: int) -> Any:
    """n + PAD float32 on the GPU, every element the sentinel NaN."""
    import torch

    return torch.full((n + PAD,), SENTINEL, dtype=torch.int32, device="cuda").view(torch.float32)


def check_gpu_transpose(library: ctypes.CDLL, rows: int, cols: int, seed: int) -> None:
    """A random rows x cols matrix (with -0.0) through solve: bit-exact, nothing else touched."""
    import torch

    gen = torch.Generator(device="cuda").manual_seed(seed)
    data = torch.randn(rows, cols, device="cuda", generator=gen)
    data.view(-1)[:: max(1, rows * cols // 7)] = -0.0  # bit-exact copies keep the sign
    n = rows * cols
    x_buffer, out_buffer = sentinel_buffer(n), sentinel_buffer(n)
    x_buffer[:n] = data.reshape(-1)
    before = x_buffer.clone()
    call_solve(library, x_buffer, out_buffer, rows, cols)
    where = f"solve(rows={rows}, cols={cols})"
    have = out_buffer[:n].view(cols, rows).view(torch.int32)
    want = data.t().contiguous().view(torch.int32)
    assert torch.equal(x_buffer.view(torch.int32), before.view(torch.int32)), (
        f"{where} modified the input (or wrote past its end): in is read-only"
    )
    tail = out_buffer[n:].view(torch.int32)
    assert bool((tail == SENTINEL).all()), (
        f"{where} wrote past the end of out (rows * cols floats): an out-of-bounds store; "
        "guard the store with out_row < cols and out_col < rows"
    )
    bad = (have != want).nonzero()
    if bad.numel():
        i, j = (int(v) for v in bad[0])
        unwritten = int((have == SENTINEL).sum())
        pytest.fail(
            f"wrong transpose for {where}: out[{i}][{j}] is not in[{j}][{i}] "
            f"({bad.shape[0]} of {n} elements wrong, {unwritten} never written): check that "
            "the grid covers ceil(cols / TILE) x ceil(rows / TILE) tiles, that the tile of "
            "block (bx, by) lands at block (by, bx) of out, and that it is read back transposed",
            pytrace=False,
        )


@pytest.mark.cuda
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{r}x{c}" for r, c in SHAPES])
def test_gpu_transpose(gpu_library: ctypes.CDLL, shape: tuple[int, int]) -> None:
    """Odd, thin and large shapes on the GPU, bit for bit."""
    check_gpu_transpose(gpu_library, *shape, seed=shape[0] * 7 + shape[1])


@pytest.mark.cuda
@pytest.mark.parametrize("tool", ["memcheck", "racecheck", "synccheck"])
def test_gpu_sanitizer(cu_source: Path, tmp_path: Path, device: str, tool: str) -> None:
    """compute-sanitizer on a stand-alone driver (exact-size buffers): out-of-bounds
    accesses, shared-memory races and divergent barriers."""
    sanitizer, binary = cu_build.sanitizer_driver(HERE / "harness.cu", cu_source, tmp_path)
    what = {
        "memcheck": "out-of-bounds access (guard the load and the store at the edge tiles)",
        "racecheck": "shared-memory race (a __syncthreads() between tile store and load?)",
        "synccheck": "barrier not reached by every thread (__syncthreads() in an if)",
    }[tool]
    for rows, cols in SANITIZER_SHAPES:
        returncode, problems, output = cu_build.sanitize(sanitizer, tool, binary, rows, cols)
        assert returncode == 0, (
            f"compute-sanitizer --tool {tool} ({rows} x {cols}) found a {what}:\n"
            + "\n".join(problems[:12] or output.splitlines()[-6:])
        )


@pytest.mark.cuda
def test_gpu_bandwidth(gpu_library: ctypes.CDLL, record_metric: Metric) -> None:
    """16384 x 16384 floats: time per call against torch's copy of the same bytes."""
    import _gpu_bench
    import torch

    x = torch.rand(_gpu_bench.N, _gpu_bench.N, device="cuda")
    out = torch.empty_like(x)
    n = _gpu_bench.N

    def run() -> None:
        gpu_library.solve(x.data_ptr(), out.data_ptr(), n, n)

    passed, message = _gpu_bench.measure("solve", run, x, out, record_metric)
    assert passed, message
