"""Undo records: what one action changed, so exactly that action can be taken back.

Each record keeps the card row before and after the action (as JSON snapshots) and, for a
rating, the id of the review it wrote. Undo reverts only when the card is still as the
action left it (and that review is still its latest); otherwise another window or device
changed it since, and the undo is refused without touching anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from quizzer.db.models import CardRow

ActionKind = Literal["rate", "suspend", "unsuspend", "bury", "reset"]


@dataclass(frozen=True, slots=True)
class UndoRecord:
    """One action of this caller's, as it changed the database."""

    kind: ActionKind
    question_id: str
    before: str | None  # card row snapshot; None: there was no row
    after: str | None  # None: the action left no row (reset)
    review_id: int | None = None  # the review a rating wrote
    cram: bool = False  # a cram rating wrote nothing


@dataclass(frozen=True, slots=True)
class UndoResult:
    """What `ReviewService.undo` did: `undone` is False when the card changed since."""

    kind: ActionKind
    question_id: str
    undone: bool
    cram: bool = False


def snapshot_of(session: Session, question_id: str) -> str | None:
    """The card row as stored now (flushed and re-read), or None without a row."""
    from quizzer.db import converters
    from quizzer.db.models import CardRow

    session.flush()
    row = session.get(CardRow, question_id, populate_existing=True)
    return converters.snapshot(row) if row is not None else None


def lock_card(session: Session, question_id: str) -> None:
    """Take the write lock (SQLite) or the card's row lock (PostgreSQL) before reading it,
    so no other writer can change the card between this transaction's read and write."""
    from sqlalchemy import update

    from quizzer.db.models import CardRow

    session.execute(
        update(CardRow)
        .where(CardRow.question_id == question_id)
        .values(question_id=CardRow.question_id)
    )


def revert(session: Session, record: UndoRecord) -> bool:
    """Take `record` back inside `session`'s transaction; False if it is stale."""
    from sqlalchemy import delete, func, select

    from quizzer.db import converters
    from quizzer.db.models import CardRow, ReviewRow

    qid = record.question_id
    lock_card(session, qid)
    if snapshot_of(session, qid) != record.after:
        return False
    if record.review_id is not None:
        latest = session.scalar(select(func.max(ReviewRow.id)).where(ReviewRow.question_id == qid))
        if latest != record.review_id:
            return False
        session.execute(delete(ReviewRow).where(ReviewRow.id == record.review_id))
    row: CardRow | None = session.get(CardRow, qid)
    if record.before is None:
        if row is not None:
            session.delete(row)
    else:
        if row is None:
            row = converters.new_row(qid, converters.created_at(record.before))
            session.add(row)
        converters.restore(row, record.before)
    return True
