"""Pytest plugin that every exercise grader runs under (``-p quizzer.exercises.plugin``).

Options: ``--solution PATH`` (the user's file), ``--device {auto,cpu,cuda}``, ``--track NAME``
and ``--quizzer-report PATH`` (JSON results, rewritten after every test so that a run killed
for a timeout or a crash still says how far it got).

Fixtures: ``solution_path``, ``solution`` (the user's module, freshly imported), ``device``
("cpu" or "cuda"), ``track`` and ``record_metric(name, value, unit)``.
Markers: ``@pytest.mark.cuda`` (skipped on CPU) and ``@pytest.mark.track("name")`` (skipped
when grading another track).

This module must not import torch: device ``auto`` imports it lazily, inside the grader run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPORT_VERSION = 1
_MAX_DETAILS = 4000
_KEY = pytest.StashKey["_Collector"]()


class SolutionLoadError(Exception):
    """The user's file could not be imported; ``kind`` is "syntax" or "import"."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def load_solution(path: str | os.PathLike[str], name: str | None = None) -> ModuleType:
    """Import the user's file as a fresh module with a unique name.

    Raises SolutionLoadError with a one-paragraph message naming the file and line.
    Also usable from spawned helper processes (e.g. the ring-allreduce ranks).
    """
    path = Path(path)
    if not path.is_file():
        raise SolutionLoadError("import", f"solution file not found: {path}")
    mod_name = name or f"quizzer_solution_{uuid.uuid4().hex[:12]}"
    try:
        source = path.read_text(encoding="utf-8")
        code = compile(source, str(path), "exec")
    except SyntaxError as exc:
        where = f"{path.name} line {exc.lineno}" if exc.lineno else path.name
        text = (exc.text or "").strip()
        detail = f"\n    {text}" if text else ""
        raise SolutionLoadError("syntax", f"syntax error in {where}: {exc.msg}{detail}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SolutionLoadError("import", f"cannot read {path}: {exc}") from None
    spec = importlib.util.spec_from_file_location(mod_name, path)
    assert spec is not None  # a path with a .py-like name always gives a spec
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        exec(code, module.__dict__)
    except BaseException as exc:
        sys.modules.pop(mod_name, None)
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise SolutionLoadError("import", _import_failure(path, exc)) from None
    return module


def _import_failure(path: Path, exc: BaseException) -> str:
    """ "importing x.py failed at line N: ErrorType: message" (line in the user's file)."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename) == path:
            line = frame.lineno
    where = f"{path.name} line {line}" if line else path.name
    return f"importing {where} failed: {type(exc).__name__}: {exc}"


class _Collector:
    """Accumulates per-test results and metrics, and writes the JSON report."""

    def __init__(self, config: pytest.Config, report_path: Path | None) -> None:
        self.config = config
        self.report_path = report_path
        self.tests: dict[str, dict[str, Any]] = {}
        self.metrics: list[dict[str, Any]] = []
        self.collect_errors: list[dict[str, str]] = []
        self.solution_error: dict[str, str] | None = None
        self.current: str | None = None
        self.device = "cpu"
        self.track = ""
        self.started = time.time()
        self.finished = False
        self.exitstatus: int | None = None

    def record(self, report: pytest.TestReport, message: str) -> None:
        entry = self.tests.setdefault(
            report.nodeid,
            {"nodeid": report.nodeid, "outcome": "running", "message": "", "duration": 0.0},
        )
        entry["duration"] = round(entry["duration"] + report.duration, 4)
        if report.when == "call" and report.outcome == "failed":
            entry["outcome"] = "failed"
        elif report.outcome == "failed" and entry["outcome"] != "failed":
            entry["outcome"] = "error"  # a fixture (setup/teardown) failed
        elif report.outcome == "skipped" and entry["outcome"] == "running":
            entry["outcome"] = "skipped"
        if report.when == "teardown" and entry["outcome"] == "running":
            entry["outcome"] = "passed"
        if message and not entry["message"]:
            entry["message"] = message
            entry["details"] = report.longreprtext[-_MAX_DETAILS:] if report.failed else ""

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:  # a grader bug or a missing dependency, never the user's code
            lines = report.longreprtext.strip().splitlines()
            message = lines[-1] if lines else "collection failed"
            self.collect_errors.append({"nodeid": report.nodeid, "message": message})
            self.write()

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.current = nodeid
        self.write()

    def write(self) -> None:
        if self.report_path is None:
            return
        data = {
            "version": REPORT_VERSION,
            "device": self.device,
            "track": self.track,
            "finished": self.finished,
            "exitstatus": self.exitstatus,
            "current": self.current,
            "solution_error": self.solution_error,
            "collect_errors": self.collect_errors,
            "tests": list(self.tests.values()),
            "metrics": self.metrics,
            "duration_s": round(time.time() - self.started, 3),
        }
        tmp = self.report_path.with_name(self.report_path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(tmp, self.report_path)


def _collector(config: pytest.Config) -> _Collector:
    return config.stash[_KEY]


def _resolve_device(requested: str) -> str:
    if requested == "cpu":
        return "cpu"
    try:
        import torch  # lazily: only the grader subprocess pays for it
    except ImportError:
        cuda = False
    else:
        cuda = bool(torch.cuda.is_available())
    if requested == "cuda" and not cuda:
        raise pytest.UsageError("--device cuda was asked for but no CUDA GPU is visible to torch")
    return "cuda" if cuda else "cpu"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("quizzer", "quizzer exercise grading")
    group.addoption("--solution", default=None, help="path of the user's solution file")
    group.addoption("--device", default="cpu", choices=("auto", "cpu", "cuda"))
    group.addoption("--track", default="", help="exercise track being graded")
    group.addoption("--quizzer-report", default=None, help="write JSON results to this path")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cuda: needs a CUDA GPU (skipped on cpu)")
    config.addinivalue_line("markers", "track(name): only for this exercise track")
    report = config.getoption("--quizzer-report")
    collector = _Collector(config, Path(report) if report else None)
    collector.device = _resolve_device(config.getoption("--device"))
    collector.track = config.getoption("--track") or ""
    config.stash[_KEY] = collector
    config.pluginmanager.register(collector, "quizzer-collector")
    collector.write()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    collector = _collector(config)
    for item in items:
        if collector.device != "cuda" and item.get_closest_marker("cuda"):
            item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU (running on cpu)"))
        marker = item.get_closest_marker("track")
        if marker and collector.track and collector.track not in marker.args:
            reason = f"for the {'/'.join(marker.args)} track (grading {collector.track})"
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report: pytest.TestReport = yield
    message = ""
    if call.excinfo is not None and report.outcome != "passed":
        message = _message(call.excinfo)
    collector = _collector(item.config)
    collector.record(report, message)
    if report.when == "teardown":
        collector.write()
    return report


def _message(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    exc = excinfo.value
    if isinstance(exc, pytest.skip.Exception):
        return str(exc.msg)
    if isinstance(exc, (AssertionError, pytest.fail.Exception)):
        text = str(exc).strip()
        head = text.split("\nassert ", 1)[0].strip()  # drop pytest's rewritten comparison
        if head and not head.startswith("assert "):
            return head
        if text:
            return text
    return f"{type(exc).__name__}: {exc}".strip()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    collector = _collector(session.config)
    collector.finished = True
    collector.current = None
    collector.exitstatus = int(exitstatus)
    collector.write()


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def solution_path(pytestconfig: pytest.Config) -> Path:
    value = pytestconfig.getoption("--solution")
    if not value:
        pytest.fail("no --solution PATH given to the grader", pytrace=False)
    return Path(value).resolve()


@pytest.fixture
def solution(solution_path: Path, pytestconfig: pytest.Config) -> ModuleType:
    try:
        return load_solution(solution_path)
    except SolutionLoadError as exc:
        _collector(pytestconfig).solution_error = {"kind": exc.kind, "message": exc.message}
        pytest.fail(exc.message, pytrace=False)


@pytest.fixture(scope="session")
def device(pytestconfig: pytest.Config) -> str:
    return _collector(pytestconfig).device


@pytest.fixture(scope="session")
def track(pytestconfig: pytest.Config) -> str:
    return _collector(pytestconfig).track


@pytest.fixture
def record_metric(
    request: pytest.FixtureRequest,
) -> Callable[[str, float, str], None]:
    collector = _collector(request.config)

    def record(name: str, value: float, unit: str) -> None:
        collector.metrics.append(
            {"name": name, "value": float(value), "unit": unit, "test": request.node.nodeid}
        )

    return record
