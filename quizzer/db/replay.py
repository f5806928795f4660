"""Recompute a card's FSRS state from its review log, in time order.

Used when reviews from elsewhere (another database, Anki) join a card's history: the state
is what the scheduler gives by replaying every review, with the same per-state fuzz draw a
live rating would have used.
"""

from __future__ import annotations

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


def replay(qid: str, reviews: list[tuple[datetime, int]], scheduler: Scheduler) -> tuple[Card, int]:
    """The card after `reviews` (time, rating) from new, and its number of lapses."""
    card = Card(card_id=1, state=State.Learning, step=0, due=reviews[0][0] if reviews else None)
    lapses = 0
    for at, rating in reviews:
        lapsed = rating == int(FsrsRating.Again) and card.state == State.Review
        with seeded(seed_for(qid, rating, card.last_review, card.step)):
            card, _ = scheduler.review_card(card, FsrsRating(rating), at)
        lapses += int(lapsed)
    return card, lapses


def recompute(
    session: Session, row: CardRow, scheduler: Scheduler, newer: dict[str, Any] | None = None
) -> None:
    """Set `row` from its merged review log. `newer` is the other side's card record: its
    suspend, bury and leech flags win when it was reviewed more recently."""
    query = (
        select(ReviewRow.reviewed_at, ReviewRow.rating)
        .where(ReviewRow.question_id == row.question_id)
        .order_by(ReviewRow.reviewed_at, ReviewRow.id)
    )
    reviews = [(at, rating) for at, rating in session.execute(query)]
    if not reviews:
        return
    ours = row.last_review
    card, lapses = replay(row.question_id, reviews, scheduler)
    converters.apply_fsrs(row, card)
    row.reps = len(reviews)
    row.lapses = lapses
    theirs = newer.get("last_review") if newer else None
    if newer and theirs is not None and (ours is None or theirs > ours):
        row.suspended = bool(newer.get("suspended"))
        row.buried_until = newer.get("buried_until")
    row.leech = bool(row.leech or (newer and newer.get("leech")))
