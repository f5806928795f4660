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
        start = time.monotonic()
        returncode, output, timed_out = _run(command, limit, cwd=Path(tmp))
        duration = round(time.monotonic() - start, 3)
        report = _read_report(report_path)
    return _result(
        ex,
        path,
        track_name,
        device,
        command,
        report,
        returncode,
        output,
        timed_out,
        duration,
        limit,
    )


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    parts = [str(_PACKAGE_PARENT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(parts)  # the plugin must import even when not installed
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # keep the package folders clean
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_PLUGINS", None)
    return env


def _run(command: list[str], limit: float, cwd: Path) -> tuple[int | None, str, bool]:
    """Run in a new process group; on timeout kill the whole group (spawned ranks too)."""
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
    return (None if timed_out else proc.returncode), output, timed_out


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
    ex: Exercise,
    path: Path,
    track: str,
    device: str,
    command: list[str],
    report: dict[str, Any] | None,
    returncode: int | None,
    output: str,
    timed_out: bool,
    duration: float,
    limit: float,
) -> GradeResult:
    tests = _tests(report)
    metrics = [Metric(**m) for m in (report or {}).get("metrics", [])]
    resolved = (report or {}).get("device") or (device if device != "auto" else "unknown")
    status, message = _classify(report, tests, returncode, output, timed_out, limit)
    current = (report or {}).get("current")
    if status in ("timeout", "crashed") and current:
        tests = [t for t in tests if t.nodeid != current]
        tests.append(TestResult(nodeid=current, outcome="error", message=message))
    return GradeResult(
        exercise=ex.name,
        status=status,
        message=message,
        device=resolved,
        track=track,
        duration_s=duration,
        command=command,
        solution_path=path,
        tests=tests,
        metrics=metrics,
        returncode=returncode,
        output=output[-_OUTPUT_TAIL:],
    )


def _classify(
    report: dict[str, Any] | None,
    tests: list[TestResult],
    returncode: int | None,
    output: str,
    timed_out: bool,
    limit: float,
) -> tuple[Status, str]:
    current = (report or {}).get("current")
    if timed_out:
        return "timeout", f"timed out after {limit:g} s while running {_short(current)}"
    if report is None or not report.get("finished"):
        how = _signal_name(returncode)
        last = (output.strip().splitlines() or [""])[-1][:300]
        detail = f": {last}" if last and report is None else ""
        return "crashed", f"the grader process died ({how}) while running {_short(current)}{detail}"
    if report.get("solution_error"):
        return "error", report["solution_error"]["message"]
    if report.get("collect_errors"):
        err = report["collect_errors"][0]
        return "error", f"the grader could not be loaded: {err['message']}"
    failed = [t for t in tests if t.outcome in ("failed", "error")]
    passed = sum(1 for t in tests if t.outcome == "passed")
    skipped = sum(1 for t in tests if t.outcome == "skipped")
    tail = f", {skipped} skipped" if skipped else ""
    if failed:
        return "failed", f"{len(failed)} of {len(tests)} checks failed ({passed} passed{tail})"
    if returncode != 0 or passed == 0:
        last = (output.strip().splitlines() or ["no output"])[-1][:300]
        return "error", f"the grader exited with {_signal_name(returncode)}: {last}"
    return "passed", f"all {passed} checks passed{tail}"
