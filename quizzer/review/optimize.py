"""Fitting the FSRS parameters to the learner's own reviews (`quizzer optimize`).

The fit is done by `fsrs-rs-python` (the `optimizer` extra), imported only when a fit
runs; reading the history, the split and the scoring need only the `fsrs` package.

- A card's history is its reviews in time order; a reset (a review of a card that was new
  again) starts a new history. The gap before a review is whole days of 24 hours, as the
  `fsrs` scheduler counts them.
- Only reviews a day or more after the card's previous review are predicted and scored:
  same-day reviews (learning steps) say little about long-term memory. `MIN_REVIEWS` of
  them are needed.
- A fifth of the cards (chosen by a hash of the question id, so the same cards every run)
  is held out: the fit never sees them, and both the default and the fitted parameters are
  scored on them.
- Log loss: the mean of -[y ln p + (1 - y) ln(1 - p)] over the scored reviews, p the
  predicted recall, y 1 unless the rating was Again. RMSE (bins): the scored reviews are
  put in 20 bins by predicted recall (width 0.05); the root of the count-weighted mean of
  (mean predicted - observed recall rate)^2 over the bins.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from quizzer.errors import QuizzerError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

MIN_REVIEWS = 2000
HOLDOUT = 0.2
BINS = 20
INSTALL_LINE = (
    "quizzer optimize needs the optimizer extra (no torch): "
    'pip install "quizzer[optimizer]" (in a checkout: pip install -e ".[optimizer]")'
)
# Why MIN_REVIEWS: in seeded histories simulated from known parameters (quizzer.review.
# simulate, 16 seeds per size), with about 2,200 scored reviews the fit beat the defaults on
# the held-out cards 16 times out of 16; with about 1,400 it lost 4 times, with 1,200 6 times.


def too_few(have: int, minimum: int = MIN_REVIEWS) -> str:
    """The one-line refusal for a history with `have` scored reviews."""
    return (
        f"not enough history to fit: {have:,} reviews a day or more after the card's previous"
        f" one; at least {minimum:,} are needed (fewer are too few to fit 21 parameters"
        " better than the defaults)"
    )


class NotEnoughReviews(QuizzerError):
    """Too few scored reviews to fit and to judge the fit."""


class OptimizerMissing(QuizzerError):
    """The optimizer extra is not installed."""


@dataclass(frozen=True, slots=True)
class CardHistory:
    """One card's reviews in time order: (time, rating 1-4)."""

    question_id: str
    reviews: tuple[tuple[datetime, int], ...]

    def gaps(self) -> list[int]:
        """Whole days since the previous review, per review (0 for the first)."""
        times = [at for at, _ in self.reviews]
        return [0] + [(b - a).days for a, b in itertools.pairwise(times)]

    def scored(self) -> int:
        """How many of its reviews are scored (a day or more after the previous one)."""
        return sum(1 for gap in self.gaps()[1:] if gap >= 1)


@dataclass(frozen=True, slots=True)
class Score:
    """How well a parameter vector predicts a set of reviews."""

    log_loss: float
    rmse_bins: float
    reviews: int


@dataclass(frozen=True, slots=True)
class OptimizeReport:
    """The outcome of one fit: both scores on the held-out cards, the fitted vector."""

    parameters: tuple[float, ...]
    default: Score
    fitted: Score
    train_cards: int
    train_reviews: int
    test_cards: int
    seconds: float
    in_use: Score | None = None  # parameters fitted before, if any

    @property
    def improved(self) -> bool:
        """Whether the fitted parameters predict the held-out reviews better than those in use."""
        best = self.in_use or self.default
        return self.fitted.log_loss < best.log_loss


def load_histories(sessions: sessionmaker[Session]) -> list[CardHistory]:
    """Every card's history from the review table; a reset starts a new one."""
    from sqlalchemy import select

    from quizzer.db.models import ReviewRow

    query = select(
        ReviewRow.question_id, ReviewRow.reviewed_at, ReviewRow.rating, ReviewRow.state_before
    ).order_by(ReviewRow.question_id, ReviewRow.reviewed_at, ReviewRow.id)
    histories: list[CardHistory] = []
    current: list[tuple[datetime, int]] = []
    last_id: str | None = None
    with sessions() as session:
        for qid, at, rating, before in session.execute(query):
            if (qid != last_id or before is None) and current:
                histories.append(CardHistory(last_id or "", tuple(current)))
                current = []
            if 1 <= rating <= 4:
                current.append((at, rating))
            last_id = qid
    if current:
        histories.append(CardHistory(last_id or "", tuple(current)))
    return histories


def scored_reviews(histories: Iterable[CardHistory]) -> int:
    """Reviews a day or more after the card's previous review, in all."""
    return sum(h.scored() for h in histories)


def held_out(question_id: str, share: float = HOLDOUT) -> bool:
    """Whether a card belongs to the held-out share (stable across runs and machines)."""
    digest = hashlib.sha256(question_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def split_by_card(
    histories: Sequence[CardHistory], share: float = HOLDOUT
) -> tuple[list[CardHistory], list[CardHistory]]:
    """(train, test): the test cards are a `share` of the cards, chosen by id."""
    train = [h for h in histories if not held_out(h.question_id, share)]
    test = [h for h in histories if held_out(h.question_id, share)]
    return train, test


def predictions(
    parameters: Sequence[float], histories: Iterable[CardHistory]
) -> list[tuple[float, int]]:
    """(predicted recall, recalled 0/1) for every scored review, replayed with the scheduler."""
    from fsrs import Card, Rating, Scheduler

    scheduler = Scheduler(parameters=parameters, enable_fuzzing=False)
    out: list[tuple[float, int]] = []
    for history in histories:
        card = Card(card_id=1)
        for (at, rating), gap in zip(history.reviews, history.gaps(), strict=True):
            if card.last_review is not None and gap >= 1:
                out.append((scheduler.get_card_retrievability(card, at), int(rating > 1)))
            card, _ = scheduler.review_card(card, Rating(rating), review_datetime=at)
    return out


def score(parameters: Sequence[float], histories: Iterable[CardHistory]) -> Score:
    """Log loss and RMSE (bins) of `parameters` on the histories (see the module text)."""
    pairs = predictions(parameters, histories)
    if not pairs:
        return Score(math.nan, math.nan, 0)
    eps = 1e-6
    loss = 0.0
    bins: dict[int, list[float]] = {}
    for p, y in pairs:
        q = min(max(p, eps), 1 - eps)
        loss -= y * math.log(q) + (1 - y) * math.log(1 - q)
        total = bins.setdefault(min(int(p * BINS), BINS - 1), [0.0, 0.0, 0.0])
        total[0] += p
        total[1] += y
        total[2] += 1
    squares = sum((s_p - s_y) ** 2 / n for s_p, s_y, n in bins.values())
    return Score(loss / len(pairs), math.sqrt(squares / len(pairs)), len(pairs))


def fit(histories: Sequence[CardHistory]) -> tuple[float, ...]:
    """FSRS parameters fitted to `histories` by fsrs-rs-python, within the scheduler's bounds.

    Raises OptimizerMissing when the `optimizer` extra is not installed.
    """
    try:
        import fsrs_rs_python as rs
    except ImportError:
        raise OptimizerMissing(INSTALL_LINE) from None
    from fsrs.scheduler import LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS

    items = []
    for history in histories:
        gaps = history.gaps()
        reviews = [
            rs.FSRSReview(rating, gap)
            for (_, rating), gap in zip(history.reviews, gaps, strict=True)
        ]
        # One item per scored review: the history up to and including it.
        items.extend(rs.FSRSItem(reviews[: i + 1]) for i in range(1, len(reviews)) if gaps[i] >= 1)
    values = rs.FSRS(rs.DEFAULT_PARAMETERS).compute_parameters(items)
    if len(values) != len(LOWER_BOUNDS_PARAMETERS):
        raise QuizzerError(
            f"the optimizer returned {len(values)} parameters; the scheduler takes"
            f" {len(LOWER_BOUNDS_PARAMETERS)} (update fsrs and fsrs-rs-python together)"
        )
    bounds = zip(values, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS, strict=True)
    return tuple(min(max(float(v), lo), hi) for v, lo, hi in bounds)


def optimize(
    histories: Sequence[CardHistory],
    *,
    in_use: Sequence[float] | None = None,
    minimum: int = MIN_REVIEWS,
    share: float = HOLDOUT,
) -> OptimizeReport:
    """Fit on the training cards; score the default, the fitted and the parameters `in_use`
    (if fitted before) on the held-out ones.

    Raises NotEnoughReviews below `minimum` scored reviews, OptimizerMissing without the extra.
    """
    from fsrs.scheduler import DEFAULT_PARAMETERS

    have = scored_reviews(histories)
    if have < minimum:
        raise NotEnoughReviews(too_few(have, minimum))
    train, test = split_by_card(histories, share)
    started = time.perf_counter()
    parameters = fit(train)
    seconds = time.perf_counter() - started
    return OptimizeReport(
        parameters=parameters,
        default=score(DEFAULT_PARAMETERS, test),
        fitted=score(parameters, test),
        train_cards=len(train),
        train_reviews=scored_reviews(train),
        test_cards=len(test),
        seconds=seconds,
        in_use=None if in_use is None else score(in_use, test),
    )
