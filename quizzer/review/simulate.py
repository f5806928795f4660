"""A review history drawn from the FSRS model itself, for checking the optimizer.

Each simulated card is studied with a scheduler built from KNOWN parameters; at each
review the learner recalls it with the probability those parameters predict, then rates it
Good mostly (Hard and Easy sometimes) or Again on a lapse. An optimizer fitted to such a
history should come back close to the known parameters and predict better than defaults.
Deterministic for a seed; no database (the caller writes the rows).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from fsrs import Card, Rating, Scheduler

START = datetime(2026, 1, 1, 9, tzinfo=UTC)
# A plausible set of FSRS-6 parameters unlike the defaults: short first memories (w0-w3),
# slow growth after a success (w8) and a flatter forgetting curve (w20).
TRUE_PARAMETERS: tuple[float, ...] = (
    0.08, 0.35, 0.9, 3.5, 6.4133, 0.8334, 3.0194, 0.001, 0.8, 0.1666, 0.796,
    1.4835, 0.0614, 0.2629, 1.6483, 0.6014, 1.8729, 0.5425, 0.0912, 0.0658, 0.5,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class SimulatedReview:
    """One simulated rating, with the card state it left (as a review row stores it)."""

    question_id: str
    rating: int
    reviewed_at: datetime
    state_before: int | None  # None: the card was new
    state_after: int
    stability: float
    difficulty: float
    due_after: datetime


def simulate_history(
    cards: int,
    days: int,
    *,
    parameters: Sequence[float] = TRUE_PARAMETERS,
    desired_retention: float = 0.9,
    spread: float = 0.5,
    seed: int = 0,
    max_reviews: int | None = None,
    prefix: str = "sim",
) -> list[SimulatedReview]:
    """Reviews of `cards` cards, introduced evenly over the first `spread` of `days` days.

    Each card is reviewed around its due time (scheduled for `desired_retention`) until
    `days` have passed or it has `max_reviews` reviews. Ids are PREFIX-00000 (five digits
    at least). Returned in time order.
    """
    rng = random.Random(seed)
    scheduler = Scheduler(
        parameters=parameters, desired_retention=desired_retention, enable_fuzzing=False
    )
    end = START + timedelta(days=days)
    out: list[SimulatedReview] = []
    for index in range(cards):
        qid = f"{prefix}-{index:05d}"
        at = START + timedelta(days=rng.uniform(0, days * spread), minutes=rng.uniform(0, 600))
        card = Card(card_id=index + 1, due=at)
        count = 0
        while at < end and (max_reviews is None or count < max_reviews):
            before = None if card.last_review is None else int(card.state)
            rating = _rating(rng, scheduler.get_card_retrievability(card, at), first=count == 0)
            card, _ = scheduler.review_card(card, rating, review_datetime=at)
            out.append(
                SimulatedReview(
                    qid,
                    int(rating),
                    at,
                    before,
                    int(card.state),
                    float(card.stability or 0.0),
                    float(card.difficulty or 0.0),
                    card.due,
                )
            )
            count += 1
            # The learner comes back a few minutes after a learning step, and anywhere from
            # a bit early to quite late for an interval of days.
            interval = card.due - card.last_review
            if interval >= timedelta(days=1):
                interval *= rng.uniform(0.5, 3.0)
            at = card.last_review + interval + timedelta(minutes=rng.uniform(0, 90))
    out.sort(key=lambda r: r.reviewed_at)
    return out


def _rating(rng: random.Random, recall: float, *, first: bool) -> Rating:
    """The learner's answer: Again with probability 1 - recall, else Hard/Good/Easy."""
    if first:
        return rng.choices(list(Rating), weights=(0.25, 0.15, 0.5, 0.1))[0]
    if rng.random() >= recall:
        return Rating.Again
    return rng.choices((Rating.Hard, Rating.Good, Rating.Easy), weights=(0.15, 0.75, 0.1))[0]
