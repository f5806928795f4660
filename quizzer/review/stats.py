"""Progress figures for the home screen and `quizzer stats`: streak, readiness, breakdowns."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from quizzer.bank.model import Bank, Filters
from quizzer.review.model import CardInfo
from quizzer.review.service import ReviewService

READY_RETRIEVABILITY = 0.9


@dataclass(frozen=True, slots=True)
class Breakdown:
    key: str
    name: str
    due: int
    new: int
    total: int


@dataclass(frozen=True, slots=True)
class Readiness:
    company: str
    name: str
    themes: int
    ready: int

    @property
    def share(self) -> float:
        return self.ready / self.themes if self.themes else 0.0


@dataclass(frozen=True, slots=True)
class Overview:
    streak: int
    reviews_today: int
    due_now: int
    new_available: int
    new_today: int  # new cards today's limit still lets in (of new_available)
    by_topic: list[Breakdown]
    by_company: list[Breakdown]
    readiness: list[Readiness]


_STREAK_BATCH = 32  # days probed per statement


def streak(service: ReviewService) -> int:
    """Consecutive study days with at least one review, ending today (or yesterday).

    Each day is one indexed existence probe, 32 days to a statement, so a long history
    costs no more than the streak is long, in few round trips (PostgreSQL included).
    Like every figure here, it goes through the service's reads: on an SQLite file, the
    standard library's driver, without loading SQLAlchemy.
    """
    now = service.clock()
    day = service.day

    def days_back() -> Iterator[tuple[datetime, datetime]]:
        begin, end = day.start_of_day(now), day.start_of_next_day(now)
        while True:
            yield begin, end
            begin, end = day.start_of_day(begin - timedelta(microseconds=1)), begin

    windows = days_back()
    count = 0
    first = True
    with service.reads() as reads:
        while True:
            studied = reads.studied_days([next(windows) for _ in range(_STREAK_BATCH)])
            if first and not studied[0]:
                studied = studied[1:]  # nothing yet today: the streak may end yesterday
            first = False
            for value in studied:
                if not value:
                    return count
                count += 1


def _is_due(card: CardInfo, now: datetime) -> bool:
    return (
        card.state != "new"
        and card.due is not None
        and card.due <= now
        and not card.suspended
        and not (card.buried_until and card.buried_until > now)
    )


def asked_themes(bank: Bank, company: str) -> set[str]:
    """The themes this company's interview write-ups asked."""
    return {t for i in bank.interviews.values() if i.company == company for t in i.themes}


def readiness(bank: Bank, cards: dict[str, CardInfo], company: str) -> Readiness:
    """Share of the themes this company asked whose cards are in review and recalled >= 0.9."""
    asked = asked_themes(bank, company)
    ready_themes = {
        theme
        for card in cards.values()
        if card.state == "review" and (card.retrievability or 0) >= READY_RETRIEVABILITY
        for theme in card.question.themes
    }
    name = bank.companies[company].name if company in bank.companies else company
    return Readiness(company, name, len(asked), len(asked & ready_themes))


def overview(
    service: ReviewService,
    targets: list[str],
    filters: Filters = Filters(),  # noqa: B008
    cards: dict[str, CardInfo] | None = None,
) -> Overview:
    """Today's counts, per-topic and per-company breakdowns and readiness, over the
    cards `filters` selects (topics sorted by due, then new, then name)."""
    bank = service.bank
    now = service.clock()
    cards = selected(service, filters, cards)
    counts = service.day_counts(filters)
    due_topic: Counter[str] = Counter()
    new_topic: Counter[str] = Counter()
    due_company: Counter[str] = Counter()
    new_company: Counter[str] = Counter()
    for card in cards.values():
        q = card.question
        if _is_due(card, now):
            due_topic[q.topic] += 1
            due_company.update(q.asked_by.keys())
        elif card.state == "new" and not card.suspended:
            new_topic[q.topic] += 1
            new_company.update(q.asked_by.keys())
    total_topic = Counter(card.question.topic for card in cards.values())
    total_company: Counter[str] = Counter()
    for card in cards.values():
        total_company.update(card.question.asked_by.keys())
    by_topic = sorted(
        (
            Breakdown(t, bank.topics[t].name, due_topic[t], new_topic[t], total_topic[t])
            for t in total_topic
        ),
        key=lambda b: (-b.due, -b.new, b.name),
    )
    by_company = [
        Breakdown(c, bank.companies[c].name, due_company[c], new_company[c], total_company[c])
        for c in targets
        if c in bank.companies
    ]
    return Overview(
        streak=streak(service),
        reviews_today=counts.reviews_done + counts.new_done,
        due_now=counts.reviews_due,
        new_available=counts.new_available,
        new_today=min(counts.new_available, service.new_left_today(counts)),
        by_topic=by_topic,
        by_company=by_company,
        readiness=sorted(
            (readiness(bank, cards, c) for c in targets if c in bank.companies),
            key=lambda r: (-r.share, r.name),
        ),
    )


def selected(
    service: ReviewService, filters: Filters, cards: dict[str, CardInfo] | None = None
) -> dict[str, CardInfo]:
    """The cards `filters` selects (all when empty), read once when not given."""
    cards = service.cards() if cards is None else cards
    if filters.empty:
        return cards
    wanted = {q.id for q in service.bank.select(filters)}
    return {qid: card for qid, card in cards.items() if qid in wanted}


@dataclass(frozen=True, slots=True)
class Retention:
    """Answers over a window: how many, and how many were not Again."""

    reviews: int
    recalled: int

    @property
    def rate(self) -> float | None:
        return self.recalled / self.reviews if self.reviews else None


def retention(
    service: ReviewService,
    days: int = 30,
    filters: Filters = Filters(),  # noqa: B008
    graduated: bool = True,
) -> Retention:
    """Share of answers in the last `days` (today's included) not rated Again.

    `graduated`: only reviews of cards in review, not learning steps (Anki's true
    retention); otherwise every answer, new and learning cards included."""
    since = service.clock() - timedelta(days=days)
    ids = None if filters.empty else [q.id for q in service.bank.select(filters)]
    with service.reads() as reads:
        answers, kept = reads.answer_counts(since, ids, graduated)
    return Retention(answers, kept)


@dataclass(frozen=True, slots=True)
class DayDue:
    """Cards falling due on one study day."""

    day: datetime  # the start of that study day (UTC)
    due: int


def forecast(cards: dict[str, CardInfo], service: ReviewService, days: int = 7) -> list[DayDue]:
    """Cards falling due on each of the next `days` study days (today includes overdue)."""
    start = service.day.start_of_day(service.clock())
    counts = [0] * days
    for card in cards.values():
        if card.state == "new" or card.due is None or card.suspended:
            continue
        index = max(0, (service.day.start_of_day(card.due) - start).days)
        if index < days:
            counts[index] += 1
    return [DayDue(start + timedelta(days=i), n) for i, n in enumerate(counts)]
