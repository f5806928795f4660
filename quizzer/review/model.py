"""What screens and commands see of a card: plain dataclasses, no ORM objects."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import IntEnum

from quizzer.bank.model import Question


class Rating(IntEnum):
    AGAIN = 1
    HARD = 2
    GOOD = 3
    EASY = 4

    @property
    def label(self) -> str:
        return self.name.capitalize()


STATE_NAMES = {None: "new", 1: "learning", 2: "review", 3: "relearning"}


@dataclass(frozen=True, slots=True)
class CardInfo:
    question: Question
    state: str  # new | learning | review | relearning
    due: datetime | None
    last_review: datetime | None
    stability: float | None
    difficulty: float | None
    retrievability: float | None
    reps: int
    lapses: int
    suspended: bool
    buried_until: datetime | None
    leech: bool


@dataclass(frozen=True, slots=True)
class RatingOutcome:
    question_id: str
    rating: Rating
    state: str
    due: datetime
    interval: timedelta
    became_leech: bool
    cram: bool


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    reviewed_at: datetime
    rating: Rating
    state_before: str
    state_after: str
    interval: timedelta
    duration_ms: int | None


@dataclass(frozen=True, slots=True)
class DayCounts:
    reviews_done: int
    new_done: int
    reviews_due: int
    new_available: int


def format_interval(delta: timedelta) -> str:
    """Short, Anki-style: 45s, 10m, 3h, 4d, 2.1mo, 1.3y."""
    seconds = max(0, delta.total_seconds())
    if seconds < 60:
        return f"{int(seconds)}s"
    if seconds < 3600:
        return f"{round(seconds / 60)}m"
    if seconds < 86400:
        return f"{round(seconds / 3600)}h"
    days = seconds / 86400
    if days < 30:
        return f"{round(days)}d"
    if days < 365:
        return f"{days / 30:.1f}mo"
    return f"{days / 365:.1f}y"


def plural(n: int, word: str) -> str:
    """'1 day', '2 days': a count with its noun."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def percent(share: float) -> str:
    """A share as a whole percentage that is 100% only when complete and 0% only when
    nothing: 0.996 -> '99%', 0.004 -> '1%' (plain rounding would claim all or none)."""
    value = round(share * 100)
    if value >= 100 and share < 1:
        value = 99
    elif value <= 0 < share:
        value = 1
    return f"{value}%"
