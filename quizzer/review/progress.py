"""Progress over time, for `quizzer stats` and the stats screen: reviews by day over the
last year, true retention by week, and readiness per target company by week.

Day and week counts are SQL aggregates over windows of local study days (the
`day-starts-at` hour, DST included). Readiness history replays only the review log of
the started cards that answer a target company's asked themes: after each review the
card is "ready" while it is in review and its FSRS retrievability, from the stability
that review left, is at least 90%, exactly as home judges readiness now.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise
from typing import TYPE_CHECKING

from quizzer.bank.model import Bank
from quizzer.review.clock import DayBoundary
from quizzer.review.model import CardInfo
from quizzer.review.progress_reads import LogEntry, ProgressReads
from quizzer.review.stats import READY_RETRIEVABILITY, asked_themes

if TYPE_CHECKING:
    from fsrs import Scheduler

    from quizzer.review.service import ReviewService

WEEKS = 53  # this week and the 52 before it: a year of weeks, Monday first
REVIEW_STATE = 2  # fsrs.State.Review


@dataclass(frozen=True, slots=True)
class WeekRetention:
    """True retention of one study week: answers to graduated cards (in review before
    the answer; learning and relearning steps not counted) and how many were not Again."""

    week: date  # the Monday the study week starts on
    reviews: int
    recalled: int  # rated Hard, Good or Easy

    @property
    def rate(self) -> float | None:
        """Share recalled, or None for a week without such answers."""
        return self.recalled / self.reviews if self.reviews else None


@dataclass(frozen=True, slots=True)
class ReadinessHistory:
    """One company's readiness at the end of each week (the current week: now)."""

    company: str
    name: str
    themes: int  # themes its write-ups asked
    ready: tuple[int, ...]  # ready themes per week of `Progress.weeks`

    @property
    def shares(self) -> tuple[float, ...]:
        """Ready themes over asked themes, per week."""
        return tuple(n / self.themes if self.themes else 0.0 for n in self.ready)


@dataclass(frozen=True, slots=True)
class Progress:
    """Everything the progress charts show, oldest first."""

    today: date  # the current local study day
    first_day: date  # the Monday 52 weeks before this week's
    reviews: tuple[int, ...]  # answers per study day, first_day to today
    weeks: tuple[date, ...]  # the Mondays of the last WEEKS study weeks, this one last
    retention: tuple[WeekRetention, ...]  # per week of `weeks`
    readiness: tuple[ReadinessHistory, ...]  # per target company, most ready now first
    first_review: date | None  # the study day of the first answer of the year, if any

    @property
    def reviews_by_day(self) -> dict[date, int]:
        """Answers per study day, days without any left out."""
        return {
            self.first_day + timedelta(days=n): count
            for n, count in enumerate(self.reviews)
            if count
        }

    def reviews_on(self, day: date) -> int:
        """Answers on one study day (0 outside the year shown)."""
        index = (day - self.first_day).days
        return self.reviews[index] if 0 <= index < len(self.reviews) else 0


def local_day(boundary: DayBoundary, instant: datetime) -> date:
    """The local calendar date of the study day `instant` falls in."""
    start = boundary.start_of_day(instant)
    return (start.astimezone(boundary.tz) if boundary.tz else start.astimezone()).date()


def day_start(boundary: DayBoundary, day: date) -> datetime:
    """When the study day of local date `day` starts, in UTC."""
    local = datetime(day.year, day.month, day.day, boundary.hour)
    aware = local.replace(tzinfo=boundary.tz) if boundary.tz else local.astimezone()
    return aware.astimezone(UTC)


@contextmanager
def progress_reads(service: ReviewService) -> Iterator[ProgressReads]:
    """The progress reads over the service's database: sqlite3 while the service reads
    quickly (SQLAlchemy stays unloaded), otherwise through a session."""
    if service.quick is not None:
        from quizzer.db.quick_progress import QuickProgressReads

        quick = QuickProgressReads.open(service.database_url)
        if quick is not None:
            try:
                yield quick
            finally:
                quick.close()
            return
    from quizzer.review.progress_queries import OrmProgressReads

    with service.sessions() as session:
        yield OrmProgressReads(session)


def progress(
    service: ReviewService,
    cards: dict[str, CardInfo],
    targets: Sequence[str],
    ids: Sequence[str] | None = None,
) -> Progress:
    """Reviews by day, retention and readiness by week, over `ids` (every card when None)
    and, for readiness, over `cards` (the selected cards) and the `targets` companies."""
    boundary = service.day
    now = service.clock()
    today = local_day(boundary, now)
    this_monday = today - timedelta(days=today.weekday())
    first_day = this_monday - timedelta(weeks=WEEKS - 1)
    days = [first_day + timedelta(days=n) for n in range((today - first_day).days + 1)]
    starts = [day_start(boundary, d) for d in [*days, today + timedelta(days=1)]]
    windows = list(pairwise(starts))
    weeks = tuple(first_day + timedelta(weeks=n) for n in range(WEEKS))
    week_ends = [day_start(boundary, m + timedelta(weeks=1)) for m in weeks[:-1]] + [now]
    bank = service.bank
    wanted = _readiness_ids(bank, cards, targets)
    with progress_reads(service) as reads:
        counts = reads.window_counts(windows, ids)
        log = reads.review_log(wanted)
    per_week = [counts[n * 7 : n * 7 + 7] for n in range(WEEKS)]
    retention = tuple(
        WeekRetention(week, sum(c.graduated for c in part), sum(c.recalled for c in part))
        for week, part in zip(weeks, per_week, strict=True)
    )
    first = next((n for n, c in enumerate(counts) if c.answers), None)
    ready = ready_weeks(log, week_ends, service.scheduler)
    ready_themes = [
        {theme for qid, flags in ready.items() if flags[n] for theme in cards[qid].question.themes}
        for n in range(WEEKS)
    ]
    return Progress(
        today=today,
        first_day=first_day,
        reviews=tuple(c.answers for c in counts),
        weeks=weeks,
        retention=retention,
        readiness=tuple(
            sorted(
                (_history(bank, c, ready_themes) for c in targets if c in bank.companies),
                key=lambda h: (-h.shares[-1], h.name),
            )
        ),
        first_review=None if first is None else days[first],
    )


def _readiness_ids(bank: Bank, cards: dict[str, CardInfo], targets: Sequence[str]) -> list[str]:
    """The started cards among `cards` that answer a theme some target company asked."""
    themes = set().union(*(asked_themes(bank, c) for c in targets)) if targets else set()
    return sorted(
        qid
        for qid, card in cards.items()
        if card.state != "new" and themes.intersection(card.question.themes)
    )


def _history(bank: Bank, company: str, ready_themes: Sequence[set[str]]) -> ReadinessHistory:
    asked = asked_themes(bank, company)
    per_week = tuple(len(asked & themes) for themes in ready_themes)
    return ReadinessHistory(company, bank.companies[company].name, len(asked), per_week)


def ready_days(scheduler: Scheduler, stability: float) -> int:
    """The most whole days after a review at which a card of this stability is still
    recalled at >= 90% by the scheduler's own forgetting curve (FSRS: about the
    stability, since stability is the interval at which recall falls to 90%)."""
    from fsrs import Card, State

    epoch = datetime(2000, 1, 1, tzinfo=UTC)
    card = Card(1, State.Review, None, stability, 5.0, epoch, epoch)  # an id: no sleep

    def recalled(days: int) -> bool:
        at = epoch + timedelta(days=days)
        return scheduler.get_card_retrievability(card, at) >= READY_RETRIEVABILITY

    days = max(0, int(stability))
    while recalled(days + 1):
        days += 1
    while days > 0 and not recalled(days):
        days -= 1
    return days


def ready_weeks(
    log: list[LogEntry], ends: Sequence[datetime], scheduler: Scheduler
) -> dict[str, list[bool]]:
    """For each card in `log` (sorted by card, then time), whether it was ready at each
    of `ends` (ascending): its last review by then left it in review, and recall from
    that review's stability was still >= 90% (whole days elapsed, as fsrs counts them)."""
    out: dict[str, list[bool]] = {}
    start = 0
    while start < len(log):
        qid = log[start].question_id
        stop = start
        while stop < len(log) and log[stop].question_id == qid:
            stop += 1
        out[qid] = _card_ready(log[start:stop], ends, scheduler)
        start = stop
    return out


def _card_ready(
    entries: list[LogEntry], ends: Sequence[datetime], scheduler: Scheduler
) -> list[bool]:
    flags = [False] * len(ends)
    n = 0  # entries[n - 1] is the last review at or before the current end
    until: datetime | None = None  # when that review's readiness runs out
    for i, end in enumerate(ends):
        while n < len(entries) and entries[n].reviewed_at <= end:
            entry = entries[n]
            n += 1
            stable = entry.stability is not None and entry.stability > 0
            if entry.state_after == REVIEW_STATE and stable:
                days = ready_days(scheduler, float(entry.stability))  # type: ignore[arg-type]
                until = entry.reviewed_at + timedelta(days=days + 1)
            else:
                until = None
        flags[i] = until is not None and end < until
    return flags
