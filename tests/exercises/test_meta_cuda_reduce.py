"""Meta-tests of cuda-reduce, end to end through the runner, for both tracks: the reference
passes, the starter fails, each mutant fails with a message naming the broken property.

On a CPU the numba track runs in the numba-cuda simulator (with the grader's shuffle shim
and race detector); the CUDA C++ track is compile-only and needs nvcc (skipped without)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from quizzer.exercises.catalog import Mutant
from quizzer.exercises.runner import grade

from .meta import CATALOG, explain

EXERCISE = CATALOG.get("cuda-reduce")
TRACKS = [t.name for t in EXERCISE.meta.tracks]
MUTANTS = EXERCISE.meta.mutants
NO_NVCC = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")

pytestmark = pytest.mark.slow


def needs(track: str) -> list[pytest.MarkDecorator]:
    return [NO_NVCC] if track == "cuda" else []


@pytest.mark.parametrize("track", [pytest.param(t, marks=needs(t)) for t in TRACKS])
def test_reference_passes(track: str) -> None:
    result = grade(EXERCISE, EXERCISE.solution_file(track), device="cpu", track=track)
    assert result.status == "passed", explain(result)
    assert result.device == "cpu"
    assert result.count("passed") >= 5, explain(result)
    if track == "cuda":  # ptxas resource usage is reported
        assert any(m.name.endswith("registers") for m in result.metrics), result.metrics


@pytest.mark.parametrize("track", [pytest.param(t, marks=needs(t)) for t in TRACKS])
def test_starter_fails(track: str) -> None:
    starter = EXERCISE.starter_file(track)
    result = grade(EXERCISE, starter, device="cpu", track=track, extra_args=["-x"])
    assert result.status == "failed", explain(result)


def test_every_mutant_file_is_listed() -> None:
    folder = EXERCISE.path / "solution" / "mutants"
    assert {m.file for m in MUTANTS} == {p.name for p in folder.iterdir()}
    for mutant in MUTANTS:
        assert mutant.track in TRACKS, mutant.file
        suffix = Path(EXERCISE.track(mutant.track).file).suffix
        assert mutant.file.endswith(suffix), mutant.file
        first = EXERCISE.mutant_file(mutant).read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith(("# mutant: ", "// mutant: ")), mutant.file


@pytest.mark.parametrize(
    "mutant",
    [pytest.param(m, marks=needs(m.track or TRACKS[0])) for m in MUTANTS],
    ids=[f"{m.track}:{m.file}" for m in MUTANTS],
)
def test_mutant_fails_naming_the_property(mutant: Mutant) -> None:
    # stop at the first failing check: it must already name the property
    path = EXERCISE.mutant_file(mutant)
    result = grade(EXERCISE, path, device="cpu", track=mutant.track, extra_args=["-x"])
    assert result.status == "failed", explain(result)
    assert any(mutant.expect in t.message for t in result.failures), (
        f"no failure mentions {mutant.expect!r}:\n{explain(result)}"
    )


# The simulator additions (cudasim_shim) checked directly, in a fresh interpreter because the
# simulator must be chosen before numba.cuda is imported: shuffle semantics (PTX rules),
# ballot, a deadlock report naming the missing lanes, warp-level steps ordered by syncwarp
# (no false race), and an out-of-bounds error carrying the thread and block ids.
SHIM_CHECK = """
import os, sys
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
sys.path.insert(0, sys.argv[1])  # the grader folder
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
print("shim ok")
"""


def test_simulator_shim_semantics(tmp_path: Path) -> None:
    script = tmp_path / "shim_check.py"
    script.write_text(SHIM_CHECK, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(EXERCISE.grader_dir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "shim ok" in done.stdout, done.stdout + done.stderr[-3000:]
