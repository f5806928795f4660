"""Grade a solution file: run the exercise's pytest grader in a subprocess with a timeout.

The grader process runs ``sys.executable -m pytest GRADER -p quizzer.exercises.plugin ...``
in its own process group; the plugin writes a JSON report after every test, so a hang or a
crash still says which test was running. Nothing here imports torch.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from quizzer.exercises.catalog import Exercise, ExerciseError, get_exercise

Status = Literal["passed", "failed", "error", "timeout", "crashed"]
Device = Literal["auto", "cpu", "cuda"]
_PACKAGE_PARENT = Path(__file__).resolve().parent.parent.parent
_OUTPUT_TAIL = 6000


@dataclass(frozen=True)
class TestResult:
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
    name: str
    value: float
    unit: str
    test: str = ""


@dataclass(frozen=True)
class GradeResult:
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
    output: str = ""  # tail of the grader's stdout+stderr

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def command_line(self) -> str:
        return shlex.join(self.command)

    def count(self, outcome: str) -> int:
        return sum(1 for t in self.tests if t.outcome == outcome)

    @property
    def failures(self) -> list[TestResult]:
        return [t for t in self.tests if t.outcome in ("failed", "error")]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (e.g. for storing an attempt)."""
        return {
            "exercise": self.exercise,
            "status": self.status,
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
    exercise: Exercise, solution_path: Path, device: str, track: str, report: Path
) -> list[str]:
    """The pytest command line; ``-c`` an empty ini and ``--confcutdir`` isolate the grader
    from any pytest configuration or conftest.py around the exercise folder."""
    return [
        sys.executable,
        "-m",
        "pytest",
        str(exercise.grader_dir),
        "-c",
        str(report.with_name("pytest.ini")),
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
        "--quizzer-report",
        str(report),
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
) -> GradeResult:
    """Run the grader of ``exercise`` against ``solution_path``; never raises for user code.

    Raises ExerciseError only for bad arguments (unknown exercise, track or device, missing
    solution file).
    """
    ex = get_exercise(exercise) if isinstance(exercise, str) else exercise
    track_name = ex.track(track).name
    if device not in ("auto", "cpu", "cuda"):
        raise ExerciseError(f"unknown device {device!r} (use auto, cpu or cuda)")
    path = Path(solution_path).expanduser().resolve()
    if not path.is_file():
        raise ExerciseError(f"solution file not found: {path}")
    limit = float(timeout if timeout is not None else ex.meta.timeout_s)
    with tempfile.TemporaryDirectory(prefix="quizzer-grade-") as tmp:
        report_path = Path(tmp) / "report.json"
        report_path.with_name("pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        command = build_command(ex, path, device, track_name, report_path)
        command += list(extra_args or [])
        if on_command is not None:
            on_command(command)
        run = _run(command, limit, cwd=Path(tmp))
        run.report = _read_report(report_path)
    return _result(ex, path, track_name, device, command, run, limit)


@dataclass
class _Run:
    returncode: int | None  # None after a timeout
    output: str
    timed_out: bool
    duration: float
    report: dict[str, Any] | None = None


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    parts = [str(_PACKAGE_PARENT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(parts)  # the plugin must import even when not installed
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # keep the package folders clean
    # no third-party plugins: faster start-up (seconds), and nothing such as a reordering or
    # timeout plugin installed by the user can change how a grader runs
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_PLUGINS", None)
    return env


def _run(command: list[str], limit: float, cwd: Path) -> _Run:
    """Run in a new process group; on timeout kill the whole group (spawned ranks too)."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            env=_environment(),
            start_new_session=True,
        )
        timed_out = False
        try:
            proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(proc)  # also reaps helpers left behind by a finished grader
        out.seek(0)
        output = out.read().decode("utf-8", errors="replace")
    duration = round(time.monotonic() - start, 3)
    return _Run(None if timed_out else proc.returncode, output, timed_out, duration)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if hasattr(os, "killpg"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    else:  # pragma: no cover - Windows
        proc.kill()
    proc.wait()


def _read_report(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _tests(report: dict[str, Any] | None) -> list[TestResult]:
    if not report:
        return []
    return [
        TestResult(
            nodeid=t["nodeid"],
            outcome=t["outcome"],
            message=t.get("message", ""),
            duration=float(t.get("duration", 0.0)),
            details=t.get("details", ""),
        )
        for t in report.get("tests", [])
    ]


def _signal_name(returncode: int | None) -> str:
    if returncode is None or returncode >= 0:
        return f"exit code {returncode}"
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _short(nodeid: str | None) -> str:
    return nodeid.rsplit("::", 1)[-1] if nodeid else "start-up"


def _result(
    ex: Exercise, path: Path, track: str, device: str, command: list[str], run: _Run, limit: float
) -> GradeResult:
    report = run.report or {}
    tests = _tests(run.report)
    status, message = _classify(run, tests, limit)
    current = report.get("current")
    if status in ("timeout", "crashed") and current:
        tests = [t for t in tests if t.nodeid != current]
        tests.append(TestResult(nodeid=current, outcome="error", message=message))
    return GradeResult(
        exercise=ex.name,
        status=status,
        message=message,
        device=report.get("device") or (device if device != "auto" else "unknown"),
        track=track,
        duration_s=run.duration,
        command=command,
        solution_path=path,
        tests=tests,
        metrics=[Metric(**m) for m in report.get("metrics", [])],
        returncode=run.returncode,
        output=run.output[-_OUTPUT_TAIL:],
    )


def _last_line(output: str, default: str = "") -> str:
    return (output.strip().splitlines() or [default])[-1][:300]


def _classify(run: _Run, tests: list[TestResult], limit: float) -> tuple[Status, str]:
    report = run.report
    current = _short((report or {}).get("current"))
    if run.timed_out:
        return "timeout", f"timed out after {limit:g} s while running {current}"
    if report is None and run.returncode is not None and run.returncode >= 0:
        return "error", f"the grader could not start: {_last_line(run.output, 'no output')}"
    if report is None or not report.get("finished"):
        how = _signal_name(run.returncode)
        return "crashed", f"the grader process died ({how}) while running {current}"
    if report.get("solution_error"):
        return "error", report["solution_error"]["message"]
    if report.get("collect_errors"):
        return "error", f"the grader could not be loaded: {report['collect_errors'][0]['message']}"
    failed = [t for t in tests if t.outcome in ("failed", "error")]
    passed = sum(1 for t in tests if t.outcome == "passed")
    skipped = sum(1 for t in tests if t.outcome == "skipped")
    tail = f", {skipped} skipped" if skipped else ""
    if failed:
        return "failed", f"{len(failed)} of {len(tests)} checks failed ({passed} passed{tail})"
    if run.returncode != 0 or passed == 0:
        last = _last_line(run.output, "no output")
        return "error", f"the grader exited with {_signal_name(run.returncode)}: {last}"
    return "passed", f"all {passed} checks passed{tail}"
