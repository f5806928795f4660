"""Pytest plugin that every exercise grader runs under (``-p quizzer.exercises.plugin``).

Options: ``--solution PATH`` (the user's file), ``--device {auto,cpu,cuda}``, ``--track NAME``;
from the runner, ``--quizzer-key-fd N`` and ``--quizzer-results-fd N`` (results are sent as
signed events as they happen, so a run killed for a timeout or a crash still says how far it
got: see :mod:`quizzer.exercises.channel`) and ``--quizzer-memory-limit BYTES`` (the address
space of a CPU-only run).

Fixtures: ``solution_path``, ``solution`` (the user's module, freshly imported), ``device``
("cpu" or "cuda"), ``track`` and ``record_metric(name, value, unit)``.
Markers: ``@pytest.mark.cuda`` (skipped on CPU) and ``@pytest.mark.track("name")`` (skipped
when grading another track).

This module must not import torch: device ``auto`` imports it lazily, inside the grader run.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import traceback
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from quizzer.exercises import guard
from quizzer.exercises.channel import Sender, read_key

_MAX_DETAILS = 4000
_MAX_MESSAGE = 4000
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
    Also usable from spawned helper processes (e.g. the ring-allreduce ranks). In a guarded
    run the reference guard is installed first, so the user's code never runs without it.
    """
    guard.install()
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
    except guard.ReferenceSolutionError as exc:
        raise SolutionLoadError("import", str(exc)) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SolutionLoadError("import", f"cannot read {path}: {exc}") from None
    spec = importlib.util.spec_from_file_location(mod_name, path)
    assert spec is not None  # a path with a .py-like name always gives a spec
    module = importlib.util.module_from_spec(spec)
    guarded = guard.user_builtins()
    if guarded is not None:
        module.__dict__["__builtins__"] = guarded
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
    """Accumulates per-test results and sends each event to the runner as it happens."""

    def __init__(self, config: pytest.Config, sender: Sender | None) -> None:
        self.config = config
        self.sender = sender
        self.tests: dict[str, dict[str, Any]] = {}
        self.device = "cpu"
        self.track = ""

    def send(self, kind: str, **fields: Any) -> None:
        """One event to the runner (nothing when run without one)."""
        if self.sender is not None:
            self.sender.send(kind, **fields)

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
            entry["message"] = message[:_MAX_MESSAGE]
            entry["details"] = report.longreprtext[-_MAX_DETAILS:] if report.failed else ""
        if report.when == "teardown":
            self.send("test", entry=entry)

    def solution_failed(self, kind: str, message: str) -> None:
        """The user's file could not be imported."""
        self.send("solution_error", error_kind=kind, message=message[:_MAX_MESSAGE])

    def reference_used(self, message: str) -> None:
        """The guard caught the user's code using the shipped reference."""
        self.send("reference", message=message[:_MAX_MESSAGE])

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:  # a grader bug or a missing dependency, never the user's code
            lines = report.longreprtext.strip().splitlines()
            message = lines[-1] if lines else "collection failed"
            self.send("collect_error", nodeid=report.nodeid, message=message[:_MAX_MESSAGE])

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.send("start", nodeid=nodeid)


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
    group.addoption("--quizzer-key-fd", type=int, default=None, help="read the results key here")
    group.addoption("--quizzer-results-fd", type=int, default=None, help="send results here")
    group.addoption("--quizzer-memory-limit", type=int, default=None, help="bytes, CPU runs")


def _sender(config: pytest.Config) -> Sender | None:
    """Read (and close) the key before any user code is imported; None without a runner."""
    key_fd = config.getoption("--quizzer-key-fd")
    results_fd = config.getoption("--quizzer-results-fd")
    if key_fd is None or results_fd is None:
        return None
    return Sender(results_fd, read_key(key_fd))


def _limit_memory(limit: int | None) -> None:
    """Cap the address space (CPU runs only: CUDA reserves more virtual memory than this)."""
    if not limit:
        return
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cuda: needs a CUDA GPU (skipped on cpu)")
    config.addinivalue_line("markers", "track(name): only for this exercise track")
    collector = _Collector(config, _sender(config))
    config.stash[_KEY] = collector
    config.pluginmanager.register(collector, "quizzer-collector")
    guard.set_reporter(collector.reference_used)
    collector.device = _resolve_device(config.getoption("--device"))
    collector.track = config.getoption("--track") or ""
    if collector.device == "cpu":
        _limit_memory(config.getoption("--quizzer-memory-limit"))
    collector.send("config", device=collector.device, track=collector.track)


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
    _collector(item.config).record(report, message)
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
    _collector(session.config).send("finish", exitstatus=int(exitstatus))


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
        _collector(pytestconfig).solution_failed(exc.kind, exc.message)
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
        collector.send("metric", name=name, value=float(value), unit=unit, test=request.node.nodeid)

    return record
