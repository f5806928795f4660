"""Rows to and from fsrs objects and the domain dataclasses screens use."""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fsrs import Card, Scheduler, State

from quizzer.bank.model import Question
from quizzer.errors import CorruptCardError
from quizzer.review.model import STATE_NAMES, CardInfo

if TYPE_CHECKING:
    from quizzer.db.models import CardRow
    from quizzer.review.reads import CardFields

# Reading a card works on any `CardFields` (an ORM row or a quick-read record), so this
# module loads the ORM models only when a row is created.

_SNAPSHOT_FIELDS = (
    "state",
    "step",
    "stability",
    "difficulty",
    "due",
    "last_review",
    "reps",
    "lapses",
    "suspended",
    "buried_until",
    "leech",
    "created_at",
)


def _is_int(value: object, low: int = 0) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def _is_real(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def problem(row: CardFields) -> str | None:
    """Why a stored card row cannot be a schedule, or None when it is sound."""
    if row.state not in (1, 2, 3) or isinstance(row.state, bool):
        return f"state {row.state!r}"
    for name in ("reps", "lapses"):
        if not _is_int(getattr(row, name)):
            return f"{name} {getattr(row, name)!r}"
    if row.due is None or row.created_at is None:
        return "a time that is not a time"
    if row.last_review is None:
        return None
    if not _is_real(row.stability) or row.stability <= 0:
        return f"stability {row.stability!r}"
    if not _is_real(row.difficulty) or not 1 <= row.difficulty <= 10:
        return f"difficulty {row.difficulty!r}"
    if row.step is not None and not _is_int(row.step):
        return f"step {row.step!r}"
    return None


def to_fsrs(row: CardFields | None, now: datetime, question_id: str = "?") -> Card:
    """The fsrs card for a row; a missing or never-reviewed row is a fresh card due now.

    A damaged row raises `CorruptCardError` naming `question_id`."""
    if row is not None:
        reason = problem(row)
        if reason is not None:
            raise CorruptCardError(question_id, reason)
    if row is None or row.last_review is None:
        return Card(card_id=1, state=State.Learning, step=0, due=now)
    return Card(
        card_id=1,
        state=State(row.state),
        step=row.step,
        stability=row.stability,
        difficulty=row.difficulty,
        due=row.due,
        last_review=row.last_review,
    )


def apply_fsrs(row: CardRow, card: Card) -> None:
    row.state = int(card.state)
    row.step = card.step
    row.stability = card.stability
    row.difficulty = card.difficulty
    row.due = card.due
    row.last_review = card.last_review


def new_card_values(question_id: str, now: datetime) -> dict[str, Any]:
    """The column values of a card row that was never reviewed."""
    return {
        "question_id": question_id,
        "state": int(State.Learning),
        "step": 0,
        "stability": None,
        "difficulty": None,
        "due": now,
        "last_review": None,
        "reps": 0,
        "lapses": 0,
        "suspended": False,
        "buried_until": None,
        "leech": False,
        "created_at": now,
    }


def new_row(question_id: str, now: datetime) -> CardRow:
    from quizzer.db.models import CardRow

    return CardRow(**new_card_values(question_id, now))


def snapshot(row: CardRow) -> str:
    """Every column of a card row as JSON, so undo can restore it exactly."""
    data: dict[str, Any] = {}
    for name in _SNAPSHOT_FIELDS:
        value = getattr(row, name)
        data[name] = value.isoformat() if isinstance(value, datetime) else value
    return json.dumps(data)


def restore(row: CardRow, text: str) -> None:
    data = json.loads(text)
    for name in _SNAPSHOT_FIELDS:
        value = data.get(name)
        if name in ("due", "last_review", "buried_until", "created_at") and value is not None:
            value = datetime.fromisoformat(value)
        setattr(row, name, value)


def created_at(text: str) -> datetime:
    """The creation time recorded in a snapshot."""
    return datetime.fromisoformat(json.loads(text)["created_at"])


def card_info(
    question: Question, row: CardFields | None, scheduler: Scheduler, now: datetime
) -> CardInfo:
    started = row is not None and row.last_review is not None
    retrievability = None
    if row is not None:
        card = to_fsrs(row, now, question.id)  # a damaged row raises here, named
        if started:
            retrievability = scheduler.get_card_retrievability(card, now)
    return CardInfo(
        question=question,
        state=STATE_NAMES[row.state if started and row is not None else None],
        due=row.due if started and row is not None else None,
        last_review=row.last_review if row else None,
        stability=row.stability if started and row is not None else None,
        difficulty=row.difficulty if started and row is not None else None,
        retrievability=retrievability,
        reps=row.reps if row else 0,
        lapses=row.lapses if row else 0,
        suspended=bool(row and row.suspended),
        buried_until=row.buried_until if row else None,
        leech=bool(row and row.leech),
    )
