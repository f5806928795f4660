"""Grade a solution file: run the exercise's pytest grader in a subprocess with a timeout.

The grader runs ``sys.executable -m pytest GRADER -p quizzer.exercises.plugin ...`` under a
supervisor that leaves no process of the run behind (:mod:`quizzer.exercises.process`). The
plugin streams signed events (:mod:`quizzer.exercises.channel`): the verdict comes from those
alone, so a hang or a crash still says which test was running and a forged report changes
nothing. A submission that is, imports or reads the shipped reference is reported as
"copied" (:mod:`quizzer.exercises.guard`). Nothing here imports torch.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from quizzer.exercises import guard as reference_guard
from quizzer.exercises import process
from quizzer.exercises.catalog import Exercise, ExerciseError, get_exercise
from quizzer.exercises.report import Status, classify, fold
from quizzer.paths import exercises_root, shipped_exercises_root

Device = Literal["auto", "cpu", "cuda"]
_PACKAGE_PARENT = Path(__file__).resolve().parent.parent.parent
_OUTPUT_TAIL = 6000
# the address space of a CPU-only run: generous for torch and numba (about 1 GB each at
# start-up, plus a malloc arena per thread), small enough to stop a runaway allocation
MEMORY_LIMIT = max(16 << 30, (os.cpu_count() or 1) << 30)


@dataclass(frozen=True)
class TestResult:
    """One check of the grader and how it went."""

    nodeid: str
    outcome: str  # passed | failed | error | skipped (error: a fixture, hang or crash)
    message: str = ""
    duration: float = 0.0
    details: str = ""

    @property
    def name(self) -> str:
        """The test's name without the file path, e.g. ``test_sum[W=2]``."""
        return self.nodeid.rsplit("::", 1)[-1]


@dataclass(frozen=True)
class Metric:
    """A measurement a check recorded (e.g. achieved bandwidth)."""

    name: str
    value: float
    unit: str
    test: str = ""


@dataclass(frozen=True)
class GradeResult:
    """The outcome of one grading run."""

    exercise: str
    status: Status
    message: str
    device: str
    track: str
    duration_s: float
    command: list[str]
    solution_path: Path
    tests: list[TestResult] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    returncode: int | None = None
    output: str = ""  # tail of the grader's stdout+stderr, cleaned of terminal controls
    output_dropped: int = 0  # bytes of output beyond what was kept
    compile_only: bool = False  # a track whose code only compiles here (no GPU to run it)

    @property
    def verdict(self) -> str:
        """What the run proves: ``status``, except "compile-only" for a clean run of a track
        that could only be compiled and inspected on this machine (not a pass)."""
        if self.compile_only and self.status == "passed":
            return "compile-only"
        return self.status

    @property
    def copied(self) -> bool:
        """True when the submission was, imported or read the shipped reference."""
        return self.status == "copied"

    @property
    def passed(self) -> bool:
        """True only for a run whose every check passed."""
        return self.status == "passed"

    @property
    def command_line(self) -> str:
        """The grader command, quoted for a shell."""
        return shlex.join(self.command)

    def count(self, outcome: str) -> int:
        """How many checks ended with ``outcome``."""
        return sum(1 for t in self.tests if t.outcome == outcome)

    @property
    def failures(self) -> list[TestResult]:
        """The failed and errored checks."""
        return [t for t in self.tests if t.outcome in ("failed", "error")]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (e.g. for storing an attempt)."""
        return {
            "exercise": self.exercise,
            "status": self.status,
            "verdict": self.verdict,
            "message": self.message,
            "device": self.device,
            "track": self.track,
            "duration_s": self.duration_s,
            "command": self.command,
            "returncode": self.returncode,
            "tests": [vars(t) for t in self.tests],
            "metrics": [vars(m) for m in self.metrics],
        }


def build_command(
    exercise: Exercise, solution_path: Path, device: str, track: str, ini: Path
) -> list[str]:
    """The pytest command line; ``-c`` an empty ini and ``--confcutdir`` isolate the grader
    from any pytest configuration or conftest.py around the exercise folder."""
    return [
        sys.executable,
        "-m",
        "pytest",
        str(exercise.grader_dir),
        "-c",
        str(ini),
        "--rootdir",
        str(exercise.grader_dir),
        "--confcutdir",
        str(exercise.grader_dir),
        "-p",
        "quizzer.exercises.plugin",
        "--solution",
        str(solution_path),
        "--device",
        device,
        "--track",
        track,
        "-q",
        "-p",
        "no:cacheprovider",
    ]


def grade(
    exercise: Exercise | str,
    solution_path: str | os.PathLike[str],
    device: Device = "auto",
    track: str | None = None,
    timeout: float | None = None,
    extra_args: list[str] | None = None,
    on_command: Callable[[list[str]], None] | None = None,
    guard: bool | None = None,
) -> GradeResult:
    """Run the grader of ``exercise`` against ``solution_path``; never raises for user code.

    ``guard`` keeps the shipped reference out of the run (a copy of it, importing it or
    reading it is reported as "copied"); by default it is on for every file except the
    exercise's own shipped solutions, which the project's tests grade to prove the grader.

    Raises ExerciseError only for bad arguments (unknown exercise, track or device, missing
    solution file).
    """
    ex = get_exercise(exercise) if isinstance(exercise, str) else exercise
    track_name = ex.track(track).name
    if device not in ("auto", "cpu", "cuda"):
        raise ExerciseError(f"unknown device {device!r} (use auto, cpu or cuda)")
    given = Path(solution_path).expanduser()
    path = given.resolve()
    if not path.is_file():
        raise ExerciseError(f"solution file not found: {path}")
    limit = float(timeout if timeout is not None else ex.meta.timeout_s)
    env = _environment()
    with tempfile.TemporaryDirectory(prefix="quizzer-grade-") as tmp:
        ini = Path(tmp) / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        command = build_command(ex, path, device, track_name, ini) + list(extra_args or [])
        if on_command is not None:
            on_command(command)
        if guard if guard is not None else not _is_shipped_solution(ex, given):
            copied = _copy_of_reference(ex, path)
            if copied:
                return _copied(ex, path, track_name, device, command, copied)
            env[reference_guard.ENV] = _guard_spec(ex).to_env()
        run = process.run(command + _memory_option(), limit, Path(tmp), env)
    return _result(ex, path, track_name, device, command, run, limit)


def _memory_option() -> list[str]:
    return ["--quizzer-memory-limit", str(MEMORY_LIMIT)]


def _is_shipped_solution(ex: Exercise, given: Path) -> bool:
    """``given`` (as named, links not followed) lies in the exercise's own solution folder."""
    folder = os.path.abspath(ex.path / "solution")
    return os.path.abspath(given).startswith(folder + os.sep)


def _protected_dirs(ex: Exercise) -> list[Path]:
    roots = {
        ex.path.parent,
        exercises_root(),
        shipped_exercises_root(),
        _PACKAGE_PARENT / "exercises",
    }
    return reference_guard.solution_dirs(sorted(roots))


def _references(ex: Exercise) -> list[Path]:
    folder = ex.path / "solution"
    return reference_guard.reference_files(folder) if folder.is_dir() else []


def _guard_spec(ex: Exercise) -> reference_guard.GuardSpec:
    return reference_guard.make_spec(_protected_dirs(ex), _references(ex))


def _copy_of_reference(ex: Exercise, path: Path) -> str | None:
    """Why ``path`` counts as the reference (a normalised copy, or an #include of it)."""
    mine = reference_guard.file_fingerprint(path)
    if mine is not None and mine in {reference_guard.file_fingerprint(r) for r in _references(ex)}:
        return (
            f"reference copied: {path.name} is the shipped reference solution"
            " (only comments or formatting differ)"
        )
    if path.suffix != ".py":
        name = reference_guard.includes_reference(path, _protected_dirs(ex))
        if name:
            return f"reference copied: {path.name} includes the shipped reference {name}"
    return None


def _copied(
    ex: Exercise, path: Path, track: str, device: str, command: list[str], message: str
) -> GradeResult:
    return GradeResult(
        exercise=ex.name,
        status="copied",
        message=message,
        device=device if device != "auto" else "unknown",
        track=track,
        duration_s=0.0,
        command=command,
        solution_path=path,
    )


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    parts = [str(_PACKAGE_PARENT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(parts)  # the plugin must import even when not installed
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # keep the package folders clean
    # no third-party plugins: faster start-up (seconds), and nothing such as a reordering or
    # timeout plugin installed by the user can change how a grader runs
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    for name in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", reference_guard.ENV):
        env.pop(name, None)
    return env


def _tests(report: dict[str, Any] | None) -> list[TestResult]:
    if not report:
        return []
    return [TestResult(**t) for t in report["tests"]]


def _result(
    ex: Exercise,
    path: Path,
    track: str,
    device: str,
    command: list[str],
    run: process.Outcome,
    limit: float,
) -> GradeResult:
    report = fold(run.results.events)
    tests = _tests(report)
    text = run.output.text()
    status, message = classify(
        report, run.results.tampered, run.timed_out, run.returncode, text, limit
    )
    current = (report or {}).get("current")
    if status in ("timeout", "crashed") and current:
        tests = [t for t in tests if t.nodeid != current]
        tests.append(TestResult(nodeid=current, outcome="error", message=message))
    notice = run.output.notice()
    resolved = (report or {}).get("device") or (device if device != "auto" else "unknown")
    return GradeResult(
        exercise=ex.name,
        status=status,
        message=message,
        device=resolved,
        track=track,
        duration_s=run.duration,
        command=command,
        solution_path=path,
        tests=tests,
        metrics=[Metric(**m) for m in (report or {}).get("metrics", [])],
        returncode=run.returncode,
        output=(f"[{notice}]\n" if notice else "") + text[-_OUTPUT_TAIL:],
        output_dropped=run.output.dropped,
        compile_only=resolved == "cpu" and ex.track(track).cpu == "compile-only",
    )
