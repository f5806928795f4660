"""Meta-tests of cuda-reduce, end to end through the runner, for both tracks: the reference
and every independently written alternative (solution/alternatives/, track by file
extension) pass, the starter fails, each mutant fails with a message naming the broken
property. The grader's helpers (simulator additions, source checks) are checked directly.

On a CPU the numba track runs in the numba-cuda simulator (with the grader's shuffle shim
and race detector); the CUDA C++ track is compile-only and needs nvcc (skipped without)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from quizzer.exercises.catalog import Mutant
from quizzer.exercises.runner import grade

from . import meta_tracks
from .meta import CATALOG, explain
from .meta_tracks import CUDAKIT

EXERCISE = CATALOG.get("cuda-reduce")
TRACKS = [t.name for t in EXERCISE.meta.tracks]
# Correct solutions written independently of the reference, in other styles.
ALTERNATIVES = meta_tracks.alternatives(EXERCISE)

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("track", meta_tracks.track_params(EXERCISE))
def test_reference_passes(track: str) -> None:
    meta_tracks.check_reference(EXERCISE, track, min_passed=5)


@pytest.mark.parametrize("path", meta_tracks.alternative_params(EXERCISE))
def test_alternative_solution_passes(path: Path) -> None:
    meta_tracks.check_alternative(EXERCISE, path)


def test_alternatives_cover_both_tracks() -> None:
    tracks = meta_tracks.track_of_suffix(EXERCISE)
    assert {tracks.get(p.suffix) for p in ALTERNATIVES} == set(TRACKS)


@pytest.mark.parametrize("track", meta_tracks.track_params(EXERCISE))
def test_starter_fails(track: str) -> None:
    starter = EXERCISE.starter_file(track)
    result = grade(EXERCISE, starter, device="cpu", track=track, extra_args=["-x"])
    assert result.status == "failed", explain(result)


# Wrong in ways only a run shows (a read past the end, nothing written for n = 0, misaligned
# float4 loads, one block): a CPU run of the CUDA C++ track compiles them cleanly, a GPU run
# must fail them.
@pytest.mark.parametrize("path", meta_tracks.gpu_mutant_params(EXERCISE))
def test_gpu_only_mutant(path: Path) -> None:
    meta_tracks.check_gpu_only_mutant(EXERCISE, path)


def test_every_mutant_file_is_listed() -> None:
    meta_tracks.check_mutants_listed(EXERCISE)


@pytest.mark.parametrize("mutant", meta_tracks.mutant_params(EXERCISE))
def test_mutant_fails_naming_the_property(mutant: Mutant) -> None:
    meta_tracks.check_mutant_fails(EXERCISE, mutant)


# The simulator additions (cudasim_shim) checked directly, in a fresh interpreter because the
# simulator must be chosen before numba.cuda is imported: shuffle semantics (PTX rules),
# ballot, a deadlock report naming the missing lanes, warp-level steps ordered by syncwarp
# (no false race), and an out-of-bounds error carrying the thread and block ids.
SHIM_CHECK = """
import os, sys
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
sys.path.insert(0, sys.argv[1])  # the CUDA exercises' shared grader helpers
import numpy as np
import numba
from numba import cuda
import cudasim_shim
cudasim_shim.install()

@cuda.jit
def shuffles(out):
    t = cuda.threadIdx.x
    lane = t % 32
    v = numba.float32(lane)
    out[0, t] = cuda.shfl_down_sync(0xFFFFFFFF, v, 1)
    out[1, t] = cuda.shfl_up_sync(0xFFFFFFFF, v, 2)
    out[2, t] = cuda.shfl_xor_sync(0xFFFFFFFF, v, 5)
    out[3, t] = cuda.shfl_sync(0xFFFFFFFF, v, 3)
    out[4, t] = cuda.shfl_down_sync(0xFFFFFFFF, v, 32)
    out[5, t] = cuda.ballot_sync(0xFFFFFFFF, lane % 2 == 0)

out = np.zeros((6, 64), np.float32)
shuffles[1, 64](out)
lanes = np.arange(64) % 32
assert (out[0] == np.where(lanes < 31, lanes + 1, lanes)).all(), out[0]
assert (out[1] == np.where(lanes >= 2, lanes - 2, lanes)).all(), out[1]
assert (out[2] == (lanes ^ 5)).all(), out[2]
assert (out[3] == 3).all(), out[3]
assert (out[4] == lanes).all(), out[4]  # offset 32 wraps to 0: own value
assert (out[5] == float(0x55555555)).all(), out[5]

@cuda.jit
def early_exit(out):
    lane = cuda.threadIdx.x
    if lane >= 16:
        return
    out[lane] = cuda.shfl_down_sync(0xFFFFFFFF, numba.float32(1.0), 1)

try:
    early_exit[1, 32](np.zeros(32, np.float32))
except RuntimeError as exc:
    assert "deadlock" in str(exc) and "16-31" in str(exc), exc
else:
    raise AssertionError("no deadlock reported")

@cuda.jit
def warp_steps(out):
    s = cuda.shared.array(32, numba.float32)
    t = cuda.threadIdx.x
    s[t] = 1.0
    cuda.syncwarp(0xFFFFFFFF)
    step = 16
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        cuda.syncwarp(0xFFFFFFFF)
        step //= 2
    if t == 0:
        out[0] = s[0]

res = np.zeros(1, np.float32)
warp_steps[1, 32](res)
assert res[0] == 32.0, res

@cuda.jit
def oob(x):
    x[cuda.threadIdx.x] = 1.0

try:
    oob[1, 8](np.zeros(4, np.float32))
except IndexError as exc:
    assert "tid=[4, 0, 0] ctaid=[0, 0, 0]" in str(exc) or "tid=[" in str(exc), exc
else:
    raise AssertionError("no out-of-bounds error")
@cuda.jit
def barrier_in_if(out):
    t = cuda.threadIdx.x
    if t < 16:
        cuda.syncthreads()
    out[t] = 1.0

try:
    barrier_in_if[1, 32](np.zeros(32, np.float32))
except RuntimeError as exc:
    assert "divergent barrier" in str(exc) and "line" in str(exc), exc
else:
    raise AssertionError("no divergent barrier reported")

@cuda.jit
def uninitialised(out):
    s = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    s[t] = 1.0
    cuda.syncthreads()
    out[t] = s[t + 32]

try:
    uninitialised[1, 32](np.zeros(32, np.float32))
except RuntimeError as exc:
    assert "uninitialised shared memory" in str(exc) and "element " in str(exc), exc
else:
    raise AssertionError("no uninitialised read reported")

@cuda.jit
def shared_flag(out):
    flag = cuda.shared.array(1, numba.int32)
    s = cuda.shared.array(32, numba.float32)
    t = cuda.threadIdx.x
    if t == 0:
        flag[0] = 1
    cuda.syncthreads()
    if flag[0] == 1:  # the same for every thread: a valid barrier below
        s[t] = 2.0
        cuda.syncthreads()
        out[t] = s[31 - t]

res32 = np.zeros(32, np.float32)
shared_flag[1, 32](res32)
assert (res32 == 2.0).all(), res32
print("shim ok")
"""


def test_simulator_shim_semantics(tmp_path: Path) -> None:
    script = tmp_path / "shim_check.py"
    script.write_text(SHIM_CHECK, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(CUDAKIT)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "shim ok" in done.stdout, done.stdout + done.stderr[-3000:]


DIVERGENT = """
__device__ float block_reduce(float* sm, float v) {
    sm[threadIdx.x] = v;
    __syncthreads();
    return sm[0];
}
__global__ void k(float* out, int n) {
    __shared__ float sm[256];
    __shared__ int last;
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int gid = blockIdx.x * blockDim.x + tid;
    if (tid < 32) __syncthreads();                                  // 13: divergent
    if (blockDim.x >= 64) { if (tid < 32) sm[tid] += 1.0f; __syncthreads(); }
    if (lane == 0) { out[0] = 1.0f; } else { __syncthreads(); }     // 15: divergent
    if (last) { block_reduce(sm, 1.0f); }
    if (gid < n) { out[1] = block_reduce(sm, 2.0f); }               // 17: divergent
    for (int s = blockDim.x / 2; s >= 32; s >>= 1) { __syncthreads(); }
    // if (tid) __syncthreads();
    const char* text = "if (tid) __syncthreads();";
}
"""


def test_source_check_finds_barriers_under_thread_dependent_branches() -> None:
    cu_source = meta_tracks.grader_module(EXERCISE, "cu_source")
    found = cu_source.divergent_barriers(DIVERGENT)
    assert [(f.line, f.barrier) for f in found] == [
        (13, "__syncthreads"),
        (15, "__syncthreads"),
        (17, "block_reduce"),
    ], found
    assert found[0].statement == "if (tid < 32)"
    reference = EXERCISE.solution_file("cuda").read_text(encoding="utf-8")
    assert cu_source.divergent_barriers(reference) == []
    assert cu_source.allocations(reference) == []
    assert cu_source.allocations("void f() { cudaMalloc(&p, 4); } // cudaFree(p)") == [
        (1, "cudaMalloc")
    ]


DIVERGENT_PY = """
from numba import cuda


@cuda.jit(device=True)
def block_sum(partial, v):
    partial[cuda.threadIdx.x] = v
    cuda.syncthreads()
    return partial[0]


@cuda.jit
def k(x, out, flag):
    partial = cuda.shared.array(256, numba.float32)
    tid = cuda.threadIdx.x
    row, col = cuda.grid(2)
    lane = tid % 32
    step = cuda.blockDim.x // 2
    while step > 0:
        if tid < step:
            partial[tid] += partial[tid + step]
        cuda.syncthreads()
        step //= 2
    if lane == 0:
        cuda.syncthreads()                      # 25: divergent
    else:
        pass
    if cuda.blockIdx.x == 0:
        cuda.syncthreads()
    if flag[0] == 1:
        partial[tid] = 1.0
        cuda.syncthreads()
    for j in range(tid, 32, 8):
        cuda.syncthreads()
    if row < x.shape[0]:
        out[row] = block_sum(partial, x[row, col])   # 36: divergent (through block_sum)
    while col < 4:
        col += 1
        cuda.syncthreads()                      # 39: divergent
    # if tid: cuda.syncthreads()
    text = "if tid: cuda.syncthreads()"


def unused():
    if cuda.threadIdx.x:
        cuda.syncthreads()                      # not reached from k
"""


def test_python_source_check_finds_barriers_under_thread_dependent_branches() -> None:
    py_source = meta_tracks.grader_module(EXERCISE, "py_source")
    found = py_source.divergent_barriers(DIVERGENT_PY, "k")
    assert [(f.line, f.barrier) for f in found] == [
        (25, "cuda.syncthreads()"),
        (36, "block_sum() (it calls cuda.syncthreads())"),
        (39, "cuda.syncthreads()"),
    ], found
    assert found[0].statement == "if lane == 0"
    assert [f.function for f in py_source.divergent_barriers(DIVERGENT_PY)] == ["k"] * 3 + [
        "unused"
    ]
    for path in [EXERCISE.solution_file("numba"), *ALTERNATIVES]:
        if path.suffix == ".py":
            assert py_source.divergent_barriers(path.read_text(encoding="utf-8")) == [], path


def test_ptx_check_finds_float_atomics_outside_shared_memory() -> None:
    ptx_checks = meta_tracks.grader_module(EXERCISE, "ptx_checks")
    kernel = ptx_checks.Kernel(
        "k",
        [
            "\tatom.global.add.f32 \t%f1, [%rd1], %f2;",
            "\t@%p1 red.relaxed.gpu.global.add.f32 \t[%rd2], %f3;",
            "\tatom.shared.add.f32 \t%f4, [%r1], %f5;",
            "\tatom.global.add.u32 \t%r2, [%rd3], 1;",
            "\tatom.global.inc.u32 \t%r3, [%rd4], %r4;",
        ],
    )
    found = ptx_checks.float_atomics(kernel)
    assert len(found) == 2 and "atom.global.add.f32" in found[0], found
