"""Turn the verified events of one grader run into a report, and the report into a verdict.

The events come from :class:`quizzer.exercises.channel.Receiver` (only lines the plugin
signed). Every string in them may hold text from the user's code, so each is cleaned of
terminal controls and shortened here, before anything else sees it.
"""

from __future__ import annotations

import signal
from typing import Any, Literal

from quizzer.exercises.output import clean

Status = Literal["passed", "failed", "error", "timeout", "crashed", "copied", "not-started"]
_MAX_TEXT = 8000


def _text(value: object, limit: int = _MAX_TEXT) -> str:
    return clean(str(value if value is not None else ""))[:limit]


def _test_entry(entry: object) -> dict[str, Any] | None:
    if not isinstance(entry, dict) or "nodeid" not in entry:
        return None
    return {
        "nodeid": _text(entry["nodeid"], 500),
        "outcome": _text(entry.get("outcome", "error"), 20),
        "message": _text(entry.get("message", "")),
        "duration": float(entry.get("duration", 0.0) or 0.0),
        "details": _text(entry.get("details", "")),
    }


def _metric(event: dict[str, Any]) -> dict[str, Any] | None:
    try:
        value = float(event["value"])
    except (KeyError, TypeError, ValueError):
        return None
    return {
        "name": _text(event.get("name", ""), 200),
        "value": value,
        "unit": _text(event.get("unit", ""), 50),
        "test": _text(event.get("test", ""), 500),
    }


def fold(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The report of a run from its events in order; None when the plugin sent nothing."""
    if not events:
        return None
    report: dict[str, Any] = {
        "device": None,
        "track": "",
        "finished": False,
        "exitstatus": None,
        "current": None,
        "solution_error": None,
        "collect_errors": [],
        "tests": {},
        "metrics": [],
        "reference": None,
    }
    for event in events:
        _apply(report, event)
    report["tests"] = list(report["tests"].values())
    return report


def _apply(report: dict[str, Any], event: dict[str, Any]) -> None:
    kind = event.get("kind")
    if kind == "config":
        report["device"] = _text(event.get("device", ""), 20) or None
        report["track"] = _text(event.get("track", ""), 100)
    elif kind == "start":
        report["current"] = _text(event.get("nodeid", ""), 500) or None
    elif kind == "test" and (entry := _test_entry(event.get("entry"))):
        report["tests"][entry["nodeid"]] = entry
    elif kind == "collect_error":
        report["collect_errors"].append({"message": _text(event.get("message", ""), 500)})
    elif kind == "solution_error":
        report["solution_error"] = {"message": _text(event.get("message", ""))}
    elif kind == "metric" and (metric := _metric(event)):
        report["metrics"].append(metric)
    elif kind == "reference" and not report["reference"]:
        report["reference"] = _text(event.get("message", ""), 500)
    elif kind == "finish":
        report["finished"] = True
        report["current"] = None
        report["exitstatus"] = event.get("exitstatus")


def signal_name(returncode: int | None) -> str:
    """``SIGABRT`` for -6, ``exit code 3`` for 3."""
    if returncode is None or returncode >= 0:
        return f"exit code {returncode}"
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def short(nodeid: str | None) -> str:
    """A test's name without its file, or "start-up" before the first test."""
    return nodeid.rsplit("::", 1)[-1] if nodeid else "start-up"


def last_line(output: str, default: str = "") -> str:
    """The last non-blank line of ``output`` (at most 300 characters)."""
    return (output.strip().splitlines() or [default])[-1][:300]


def classify(
    report: dict[str, Any] | None,
    tampered: str | None,
    timed_out: bool,
    returncode: int | None,
    output: str,
    limit: float,
) -> tuple[Status, str]:
    """The run's status and one-line message."""
    if tampered:
        return "error", f"the grader's results cannot be trusted: {tampered}"
    if report and report.get("reference"):
        return "copied", report["reference"]
    current = short((report or {}).get("current"))
    if timed_out:
        return "timeout", f"timed out after {limit:g} s while running {current}"
    if report is None and returncode is not None and returncode >= 0:
        return "error", f"the grader could not start: {last_line(output, 'no output')}"
    if report is None or not report.get("finished"):
        how = signal_name(returncode)
        return "crashed", f"the grader process died ({how}) while running {current}"
    if report.get("solution_error"):
        return "error", report["solution_error"]["message"]
    if report.get("collect_errors"):
        return "error", f"the grader could not be loaded: {report['collect_errors'][0]['message']}"
    return _verdict(report["tests"], returncode, output)


def _verdict(
    tests: list[dict[str, Any]], returncode: int | None, output: str
) -> tuple[Status, str]:
    failed = [t for t in tests if t["outcome"] in ("failed", "error")]
    passed = sum(1 for t in tests if t["outcome"] == "passed")
    skipped = sum(1 for t in tests if t["outcome"] == "skipped")
    tail = f", {skipped} skipped" if skipped else ""
    if failed:
        return "failed", f"{len(failed)} of {len(tests)} checks failed ({passed} passed{tail})"
    if returncode != 0 or passed == 0:
        last = last_line(output, "no output")
        return "error", f"the grader exited with {signal_name(returncode)}: {last}"
    return "passed", f"all {passed} checks passed{tail}"
