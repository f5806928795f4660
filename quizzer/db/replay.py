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

from quizzer.db import converters
from quizzer.review.fuzz import seed_for, seeded

if TYPE_CHECKING:
    from fsrs import Scheduler


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


def merge_card(
    qid: str,
    scheduler: Scheduler,
    base: dict[str, Any] | None,
    stored: list[dict[str, Any]],
    incoming: list[dict[str, Any]],
    newer: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The card row (as column values) after replaying `stored` and `incoming` reviews in
    time order (ties: stored first). `base` is the stored row, if any; `newer` the other
    side's card record, whose suspend and bury flags win when it was reviewed more
    recently. Incoming reviews marked ``derived`` get their state columns from the replay
    (and lose the mark)."""
    log = sorted(stored + incoming, key=lambda r: r["reviewed_at"])
    card, lapses, steps = replay(qid, [(r["reviewed_at"], r["rating"]) for r in log], scheduler)
    for review, (before, after) in zip(log, steps, strict=True):
        if review.pop("derived", False):
            review.update(
                state_before=before,
                state_after=int(after.state),
                stability=after.stability,
                difficulty=after.difficulty,
                due_after=after.due,
            )
    first = log[0]["reviewed_at"]
    row = dict(base) if base else converters.new_card_values(qid, first)
    ours = row.get("last_review")
    row.update(
        state=int(card.state),
        step=card.step,
        stability=card.stability,
        difficulty=card.difficulty,
        due=card.due,
        last_review=card.last_review,
        reps=len(log),
        lapses=lapses,
    )
    theirs = newer.get("last_review") if newer else None
    if newer and theirs is not None and (ours is None or theirs > ours):
        row["suspended"] = bool(newer.get("suspended"))
        row["buried_until"] = newer.get("buried_until")
    row["leech"] = bool(row.get("leech") or (newer and newer.get("leech")))
    return row
