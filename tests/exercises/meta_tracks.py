"""Shared by the meta-tests of the exercises with two tracks (cuda-reduce, cuda-gemm,
cuda-transpose, cuda-softmax: numba and CUDA C++, told apart by file extension; layernorm:
torch and numba): the files each track grades with their pytest parameters (a CUDA C++
file needs nvcc), the checks every such exercise makes of them through the runner, and the
import of a grader's helper module."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from quizzer.exercises.catalog import Exercise, Mutant
from quizzer.exercises.runner import GradeResult, grade

from .meta import explain

CUDAKIT = Path(__file__).resolve().parents[2] / "exercises" / "_cudakit"  # shared helpers
COMMENT = {".py": "# ", ".cu": "// "}  # how a track's file starts its first line
NO_NVCC = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")


def needs(track: str) -> list[pytest.MarkDecorator]:
    """The marks of a check that grades ``track``: the CUDA C++ track needs nvcc."""
    return [NO_NVCC] if track == "cuda" else []


def has_gpu() -> bool:
    """Whether torch sees a CUDA GPU."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def track_of_suffix(exercise: Exercise) -> dict[str, str]:
    """File extension -> track name (".py" -> "numba", ".cu" -> "cuda")."""
    return {Path(t.file).suffix: t.name for t in exercise.meta.tracks}


def alternatives(exercise: Exercise) -> list[Path]:
    """The correct solutions written independently of the reference (solution/alternatives)."""
    return sorted((exercise.path / "solution" / "alternatives").iterdir())


def gpu_mutants(exercise: Exercise) -> list[Path]:
    """The .cu files wrong in ways only a run shows (solution/gpu_mutants)."""
    return sorted((exercise.path / "solution" / "gpu_mutants").glob("*.cu"))


def track_params(exercise: Exercise) -> list[Any]:
    """One parameter per track, named after it."""
    return [pytest.param(t.name, marks=needs(t.name)) for t in exercise.meta.tracks]


def alternative_params(exercise: Exercise) -> list[Any]:
    """One parameter per alternative solution, named after its file."""
    tracks = track_of_suffix(exercise)
    return [
        pytest.param(p, marks=needs(tracks.get(p.suffix, "")), id=p.name)
        for p in alternatives(exercise)
    ]


def mutant_params(exercise: Exercise) -> list[Any]:
    """One parameter per listed mutant, named ``track:file``."""
    first = exercise.meta.tracks[0].name
    return [
        pytest.param(m, marks=needs(m.track or first), id=f"{m.track}:{m.file}")
        for m in exercise.meta.mutants
    ]


def gpu_mutant_params(exercise: Exercise) -> list[Any]:
    """One parameter per GPU-only mutant, named after its file."""
    return [pytest.param(p, id=p.name) for p in gpu_mutants(exercise)]


def check_compile_only(result: GradeResult) -> None:
    """A clean CPU run of the CUDA C++ track: ptxas resource usage is reported, and what the
    run did not check (it is "compile-only", not a pass)."""
    assert any(m.name.endswith("registers") for m in result.metrics), result.metrics
    summary = [m for m in result.metrics if m.name.startswith("compile checks passed;")]
    assert summary, result.metrics
    assert "not run: needs a CUDA GPU" in summary[0].name, summary[0]
    assert result.verdict == "compile-only", explain(result)


def check_reference(exercise: Exercise, track: str, min_passed: int) -> None:
    """The reference of ``track`` passes on the CPU, at least ``min_passed`` checks run."""
    result = grade(exercise, exercise.solution_file(track), device="cpu", track=track)
    assert result.status == "passed", explain(result)
    assert result.device == "cpu"
    assert result.count("passed") >= min_passed, explain(result)
    if track == "cuda":
        check_compile_only(result)


def check_alternative(exercise: Exercise, path: Path, result: GradeResult | None = None) -> None:
    """An alternative solution says so on its first line and passes its track (graded here
    unless ``result`` is given)."""
    tracks = track_of_suffix(exercise)
    assert path.suffix in tracks, f"{path.name}: not a file of any track"
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith(COMMENT[path.suffix] + "alternative: "), path.name
    if result is None:
        result = grade(exercise, path, device="cpu", track=tracks[path.suffix])
    assert result.status == "passed", explain(result)


def check_mutants_listed(exercise: Exercise) -> None:
    """solution/mutants holds exactly the listed mutants, each a file of its track that
    says it is a mutant on its first line."""
    mutants = exercise.meta.mutants
    folder = exercise.path / "solution" / "mutants"
    assert {m.file for m in mutants} == {p.name for p in folder.iterdir()}
    tracks = [t.name for t in exercise.meta.tracks]
    for mutant in mutants:
        assert mutant.track in tracks, mutant.file
        suffix = Path(exercise.track(mutant.track).file).suffix
        assert mutant.file.endswith(suffix), mutant.file
        first = exercise.mutant_file(mutant).read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith(COMMENT[suffix] + "mutant: "), mutant.file


def check_names_property(result: GradeResult, expect: str) -> None:
    """A failed run in which some failure message contains ``expect``."""
    assert result.status == "failed", explain(result)
    assert any(expect in t.message for t in result.failures), (
        f"no failure mentions {expect!r}:\n{explain(result)}"
    )


def check_mutant_fails(exercise: Exercise, mutant: Mutant) -> None:
    """The mutant fails at its first failing check (-x), which already names the property."""
    path = exercise.mutant_file(mutant)
    result = grade(exercise, path, device="cpu", track=mutant.track, extra_args=["-x"])
    check_names_property(result, mutant.expect)


def check_gpu_only_mutant(
    exercise: Exercise, path: Path, cpu_grade: Callable[[], GradeResult] | None = None
) -> None:
    """A GPU-only mutant: on a GPU it fails; on a CPU it compiles cleanly, "compile-only"
    (``cpu_grade()`` gives that run, graded here by default). Skipped without nvcc."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("// mutant: "), path.name
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not found")
    if has_gpu():
        result = grade(exercise, path, device="cuda", track="cuda", extra_args=["-x"])
        assert result.status == "failed", explain(result)
        return
    result = cpu_grade() if cpu_grade else grade(exercise, path, device="cpu", track="cuda")
    assert result.status == "passed", explain(result)  # compiles: a CPU cannot see it
    assert result.verdict == "compile-only", explain(result)


def grader_module(exercise: Exercise, name: str) -> ModuleType:
    """A helper module of ``exercise``'s grader (or of _cudakit, when the grader has none of
    that name), imported by path as ``<exercise>_<name>``. The grader's folder and _cudakit
    are added to the end of sys.path, for the modules it imports by name."""
    for folder in (str(exercise.grader_dir), str(CUDAKIT)):
        if folder not in sys.path:
            sys.path.append(folder)
    path = exercise.grader_dir / f"{name}.py"
    module_name = f"{exercise.name.replace('-', '_')}_{name.lstrip('_')}"
    spec = importlib.util.spec_from_file_location(
        module_name, path if path.exists() else CUDAKIT / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
