"""The reads progress over time needs, as an interface with two implementations.

`quizzer.review.progress_queries.OrmProgressReads` runs them through SQLAlchemy on any
database; `quizzer.db.quick_progress.QuickProgressReads` runs the same SQL with the
standard library's sqlite3 driver, so `quizzer stats` on an SQLite file never loads
SQLAlchemy. A test holds the two to the same answers.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class WindowCounts:
    """The answers given in one time window."""

    answers: int  # every answer, new and learning cards included
    graduated: int  # answers to cards that were in review (state_before = review)
    recalled: int  # of those, rated Hard, Good or Easy


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One review as the readiness history replays it: when, and the card after it."""

    question_id: str
    reviewed_at: datetime
    state_after: int | None  # fsrs.State; 2 is review
    stability: float | None


class ProgressReads(Protocol):
    """Aggregates over the review log, read in one statement each."""

    def window_counts(
        self, windows: Sequence[tuple[datetime, datetime]], ids: Collection[str] | None
    ) -> list[WindowCounts]:
        """For each [begin, end) window, the answers in it (of `ids` only, when given)."""
        ...

    def review_log(self, ids: Collection[str]) -> list[LogEntry]:
        """Every review of `ids`, by question, oldest first."""
        ...
