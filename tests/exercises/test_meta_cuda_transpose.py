"""Meta-tests of cuda-transpose, end to end through the runner, for both tracks: the reference
and every alternative (solution/alternatives/, track by file extension) pass, the starter
fails, each mutant fails with a message naming the broken property, and the GPU-only mutants
compile cleanly on a CPU (only a GPU run can see them). The grader's helpers (the
simulator recorder, the tile-layout source check) are checked directly.

The grading runs are independent subprocesses, so the module starts the ones its collected
tests need two at a time (the numba simulator and nvcc each keep one core busy) and each test
waits for its own."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from quizzer.exercises.runner import GradeResult, grade

from . import meta_tracks
from .meta import CATALOG, explain
from .meta_tracks import CUDAKIT

EXERCISE = CATALOG.get("cuda-transpose")
TRACKS = [t.name for t in EXERCISE.meta.tracks]
TRACK_OF_SUFFIX = meta_tracks.track_of_suffix(EXERCISE)
WORKERS = 2

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Case:
    """One grading run: a file graded on the CPU for a track (``-x`` when fail_fast)."""

    path: Path
    track: str
    fail_fast: bool = False
    expect: str = ""  # for a mutant: a failure message must contain this

    @property
    def id(self) -> str:
        return f"{self.track}:{self.path.name}"


def case_param(case: Case) -> Any:
    return pytest.param(case, marks=meta_tracks.needs(case.track), id=case.id)


REFERENCES = [Case(EXERCISE.solution_file(t), t) for t in TRACKS]
STARTERS = [Case(EXERCISE.starter_file(t), t, fail_fast=True) for t in TRACKS]
ALTERNATIVE_CASES = [
    Case(p, TRACK_OF_SUFFIX.get(p.suffix, "?")) for p in meta_tracks.alternatives(EXERCISE)
]
MUTANTS = [
    Case(EXERCISE.mutant_file(m), m.track or TRACKS[0], fail_fast=True, expect=m.expect)
    for m in EXERCISE.meta.mutants
]
GPU_ONLY = [Case(p, "cuda") for p in meta_tracks.gpu_mutants(EXERCISE)]


def _run(case: Case) -> GradeResult:
    extra = ["-x"] if case.fail_fast else []
    return grade(EXERCISE, case.path, device="cpu", track=case.track, extra_args=extra)


@pytest.fixture(scope="module")
def graded(request: pytest.FixtureRequest) -> Iterator[Callable[[Case], GradeResult]]:
    """``graded(case)``: the result of grading ``case``. The runs of every collected test of
    this module are started at once on a small pool, so they overlap."""
    pool = ThreadPoolExecutor(max_workers=WORKERS)
    futures: dict[Case, Future[GradeResult]] = {}

    def submit(case: Case) -> Future[GradeResult]:
        if case not in futures:
            futures[case] = pool.submit(_run, case)
        return futures[case]

    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        case = params.get("case")
        mine = item.module is sys.modules[__name__] and isinstance(case, Case)
        if mine and not (case.track == "cuda" and shutil.which("nvcc") is None):
            submit(case)
    yield lambda case: submit(case).result()
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("case", [case_param(c) for c in REFERENCES])
def test_reference_passes(graded: Callable[[Case], GradeResult], case: Case) -> None:
    result = graded(case)
    assert result.status == "passed", explain(result)
    assert result.device == "cpu"
    assert result.count("passed") >= 7, explain(result)
    if case.track == "cuda":
        meta_tracks.check_compile_only(result)


@pytest.mark.parametrize("case", [case_param(c) for c in ALTERNATIVE_CASES])
def test_alternative_solution_passes(graded: Callable[[Case], GradeResult], case: Case) -> None:
    meta_tracks.check_alternative(EXERCISE, case.path, graded(case))


def test_alternatives_cover_both_tracks() -> None:
    counts = {t: sum(c.track == t for c in ALTERNATIVE_CASES) for t in TRACKS}
    assert all(n >= 2 for n in counts.values()), counts


@pytest.mark.parametrize("case", [case_param(c) for c in STARTERS])
def test_starter_fails(graded: Callable[[Case], GradeResult], case: Case) -> None:
    result = graded(case)
    assert result.status == "failed", explain(result)
    assert "not implemented" in result.failures[0].message, explain(result)


def test_every_mutant_file_is_listed() -> None:
    meta_tracks.check_mutants_listed(EXERCISE)
    assert 8 <= len(EXERCISE.meta.mutants) <= 28  # each costs CI time (simulator or nvcc)


@pytest.mark.parametrize("case", [case_param(c) for c in MUTANTS])
def test_mutant_fails_naming_the_property(
    graded: Callable[[Case], GradeResult], case: Case
) -> None:
    # stop at the first failing check (-x): it must already name the property
    meta_tracks.check_names_property(graded(case), case.expect)


@pytest.mark.parametrize("case", [case_param(c) for c in GPU_ONLY])
def test_gpu_only_mutant(graded: Callable[[Case], GradeResult], case: Case) -> None:
    """Wrong in ways only a run shows (edges, grid, indices): a CPU run compiles them
    cleanly ("compile-only", not a pass); a GPU run must fail them."""
    meta_tracks.check_gpu_only_mutant(EXERCISE, case.path, lambda: graded(case))


TILES = """
#define TILE 32
constexpr int T2 = 16;
constexpr int PITCH = T2 + 1;
__global__ void k(float* out) {
    __shared__ float padded[TILE][TILE + 1];
    __shared__ float wrong_dim[TILE + 1][TILE];
    __shared__ float plain[TILE][TILE];
    __shared__ float swizzled[TILE][TILE];
    __shared__ float two_way[TILE][TILE + 2];
    __shared__ float flat[T2 * PITCH];
    __shared__ float flat_plain[TILE * TILE];
    swizzled[threadIdx.y][threadIdx.x ^ threadIdx.y] = 1.0f;
    out[0] = swizzled[threadIdx.x][threadIdx.y ^ threadIdx.x];
    // __shared__ float commented[TILE][TILE];
}
"""


def test_tile_source_check_finds_conflicting_layouts() -> None:
    tiles = {t.name: t for t in meta_tracks.grader_module(EXERCISE, "_tile_source").tiles(TILES)}
    assert set(tiles) == {
        "padded",
        "wrong_dim",
        "plain",
        "swizzled",
        "two_way",
        "flat",
        "flat_plain",
    }
    degrees = {name: t.degree for name, t in tiles.items()}
    assert degrees == {
        "padded": 1,
        "wrong_dim": 32,
        "plain": 32,
        "swizzled": 1,
        "two_way": 2,
        "flat": 1,
        "flat_plain": 32,
    }, degrees
    assert "wrong dimension" in (tiles["wrong_dim"].verdict() or "")
    assert "32-way bank conflict" in (tiles["plain"].verdict() or "")
    assert tiles["padded"].verdict() is None and tiles["swizzled"].verdict() is None


# The recorder (_simaudit) checked directly, in a fresh interpreter (the simulator must be
# chosen before numba.cuda is imported): the unpadded column read is a 32-way conflict, the
# padded one none, a broadcast is no conflict, and a strided store is uncoalesced.
AUDIT_CHECK = """
import os, sys
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
sys.path[:0] = sys.argv[1:3]
import numpy as np
import numba
from numba import cuda
import cudasim_shim, _simaudit
cudasim_shim.install()

@cuda.jit
def columns(x, out, width):
    plain = cuda.shared.array((32, 32), numba.float32)
    padded = cuda.shared.array((32, 33), numba.float32)
    t = cuda.threadIdx.x
    for r in range(32):
        plain[r, t] = 1.0
        padded[r, t] = 1.0
    cuda.syncthreads()
    v = plain[t, 0] + padded[t, 0] + plain[0, 0]  # column, column, broadcast
    out[t, 0] = x[0, t] + v  # coalesced load, strided store

x = cuda.to_device(np.ones((1, 32), np.float32))
out = cuda.to_device(np.zeros((32, 2), np.float32))
with _simaudit.recording(x, out) as seen:
    columns[1, 32](x, out, 32)
loads = [g for g in seen.groups.values() if g.space == "shared" and g.kind == "load"]
degrees = sorted(
    max(len({a.address // 4 for a in g.accesses if (a.address // 4) % 32 == b}) for b in range(32))
    for g in loads
)
assert degrees == [1, 1, 32], degrees
conflict = seen.worst_conflict()
assert conflict.degree == 32 and conflict.group.shape == (32, 32), conflict
assert seen.uncoalesced("load") is None
group, a, b = seen.uncoalesced("store")
assert group.array == "out" and b.address - a.address == 8, (group, a, b)

try:
    with _simaudit.recording(x, out):
        columns[1, 32](x, cuda.to_device(np.zeros((31, 2), np.float32)), 32)
except IndexError as exc:
    assert "out-of-bounds store" in str(exc), exc
else:
    raise AssertionError("no out-of-bounds store reported")
print("audit ok")
"""


def test_simulator_recorder(tmp_path: Path) -> None:
    script = tmp_path / "audit_check.py"
    script.write_text(AUDIT_CHECK, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(EXERCISE.grader_dir), str(CUDAKIT)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "audit ok" in done.stdout, done.stdout + done.stderr[-3000:]
