"""Recompute a card's FSRS state from its review log, in time order.

Used when reviews from elsewhere (another database, Anki) join a card's history: the state
is what the scheduler gives by replaying every review, with the same per-state fuzz draw a
live rating would have used.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fsrs import Card, State
from fsrs import Rating as FsrsRating
from sqlalchemy import select

from quizzer.db import converters
from quizzer.db.models import CardRow, ReviewRow
from quizzer.review.fuzz import seed_for, seeded

if TYPE_CHECKING:
    from fsrs import Scheduler
    from sqlalchemy.orm import Session


def replay(
    qid: str, reviews: list[tuple[datetime, int]], scheduler: Scheduler
) -> tuple[Card, int, list[tuple[int | None, Card]]]:
    """The card after `reviews` (time, rating) from new, its number of lapses, and each
    step's (state before, card after)."""
    card = Card(card_id=1, state=State.Learning, step=0, due=reviews[0][0] if reviews else None)
    lapses = 0
    steps: list[tuple[int | None, Card]] = []
    for at, rating in reviews:
        before = int(card.state) if card.last_review is not None else None
        lapsed = rating == int(FsrsRating.Again) and card.state == State.Review
        with seeded(seed_for(qid, rating, card.last_review, card.step)):
            card, _ = scheduler.review_card(card, FsrsRating(rating), at)
        lapses += int(lapsed)
        steps.append((before, card))
    return card, lapses, steps


def recompute(
    session: Session,
    row: CardRow,
    scheduler: Scheduler,
    newer: dict[str, Any] | None = None,
    added: Sequence[ReviewRow] = (),
    fill: Collection[ReviewRow] = (),
) -> None:
    """Set `row` from its merged review log. `newer` is the other side's card record: its
    suspend, bury and leech flags win when it was reviewed more recently. The reviews in
    `fill` (from a log without quizzer's state columns) get theirs from the replay.
    `added` are reviews not yet flushed (merged here in memory, after stored ones at the
    same instant)."""
    query = (
        select(ReviewRow)
        .where(ReviewRow.question_id == row.question_id)
        .order_by(ReviewRow.reviewed_at, ReviewRow.id)
    )
    with session.no_autoflush:
        stored = list(session.scalars(query))
    pending = set(map(id, added))
    rows = [r for r in stored if id(r) not in pending] + list(added)
    rows.sort(key=lambda r: r.reviewed_at)  # stable: ties keep stored order, then new
    if not rows:
        return
    ours = row.last_review
    card, lapses, steps = replay(
        row.question_id, [(r.reviewed_at, r.rating) for r in rows], scheduler
    )
    filled = {id(r) for r in fill}
    for review, (before, after) in zip(rows, steps, strict=True):
        if id(review) in filled:
            review.state_before = before
            review.state_after = int(after.state)
            review.stability = after.stability
            review.difficulty = after.difficulty
            review.due_after = after.due
    converters.apply_fsrs(row, card)
    row.reps = len(rows)
    row.lapses = lapses
    theirs = newer.get("last_review") if newer else None
    if newer and theirs is not None and (ours is None or theirs > ours):
        row.suspended = bool(newer.get("suspended"))
        row.buried_until = newer.get("buried_until")
    row.leech = bool(row.leech or (newer and newer.get("leech")))
