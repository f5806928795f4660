"""Progress over the exercises from the stored attempts: best result per track, what is
passed, and which exercise comes next.

Works on any objects with an attempt's fields (``quizzer.db.attempts.Attempt``); nothing here
touches the database. Only runs whose grader started and ran checks count towards a best
result: an error run (the file did not import, the grader could not start, a copy of the
reference) says nothing about how far the user got.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

COUNTED = frozenset({"passed", "compile-only", "failed", "timeout", "crashed"})


class AttemptLike(Protocol):
    """The fields of a stored attempt that progress needs."""

    track: str
    status: str
    device: str
    duration_s: float
    passed: int
    failed: int
    errors: int
    skipped: int


def _rank(attempt: AttemptLike) -> tuple[bool, bool, int, int, float]:
    return (
        attempt.status == "passed",
        attempt.status == "compile-only",
        attempt.passed,
        -(attempt.failed + attempt.errors),
        -attempt.duration_s,
    )


def best_by_track(attempts: Iterable[AttemptLike]) -> dict[str, AttemptLike]:
    """Per track, the best counted attempt: a pass (the fastest), else the most checks passed."""
    best: dict[str, AttemptLike] = {}
    for attempt in attempts:
        if attempt.status not in COUNTED:
            continue
        current = best.get(attempt.track)
        if current is None or _rank(attempt) > _rank(current):
            best[attempt.track] = attempt
    return best


def best_text(attempt: AttemptLike) -> str:
    """``24/25 (1 skip, cpu)``: checks passed of all checks, skipped ones included."""
    total = attempt.passed + attempt.failed + attempt.errors + attempt.skipped
    skips = f"{attempt.skipped} skip, " if attempt.skipped else ""
    compiled = ", compile only" if attempt.status == "compile-only" else ""
    return f"{attempt.passed}/{total} ({skips}{attempt.device}{compiled})"


def best_cell(tracks: list[str], attempts: Iterable[AttemptLike]) -> str:
    """The status table's "best": one result, or one line per track that has one
    (``numba 24/41 (17 skip, cpu)``); ``-`` when no run counts yet."""
    best = best_by_track(attempts)
    if len(tracks) == 1:
        return best_text(best[tracks[0]]) if tracks[0] in best else "-"
    lines = [f"{track} {best_text(best[track])}" for track in tracks if track in best]
    return "\n".join(lines) or "-"


def is_passed(attempts: Iterable[AttemptLike]) -> bool:
    """True when some track of the exercise passed."""
    return any(a.status == "passed" for a in attempts)


def status_of(attempts: list[AttemptLike], started: bool) -> str:
    """passed, compiled (compile checks only), in progress, started or not started."""
    best = best_by_track(attempts)
    if any(a.status == "passed" for a in best.values()):
        return "passed"
    if any(a.status == "compile-only" for a in best.values()):
        return "compiled"
    if attempts:
        return "in progress"
    return "started" if started else "not started"


def by_frequency(asked: Mapping[str, int]) -> list[str]:
    """Exercise names, most asked in interviews first (ties keep the given order)."""
    order = list(asked)
    return sorted(order, key=lambda name: (-asked[name], order.index(name)))


def next_exercise(asked: Mapping[str, int], passed: Iterable[str]) -> str | None:
    """The most asked exercise not passed yet, or None when every one is passed."""
    done = set(passed)
    return next((name for name in by_frequency(asked) if name not in done), None)


def progress_line(passed: int, ready: int) -> str:
    """``Progress: 3/7 passed``."""
    return f"Progress: {passed}/{ready} passed"
