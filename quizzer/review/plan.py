"""Study to a date: which cards to learn for an interview, on which day, and how much of
what those companies ask you can expect to recall on the day.

The plan is never stored, only its target (companies, date, minutes a day); it is derived
from the current schedule each time it is read, so missed days and lapses move the
remaining cards instead of breaking the plan.

1. Cards: every card answering a theme the target companies asked, in the new-card order
   (breadth first, foundations first). Suspended cards are left out.
2. Days: one sitting a day from today to the day before the date, at the time of day the
   plan is read. New cards are introduced no later than `margin_days` before the date:
   the learning steps on the day, the first review interval FSRS gives a new card, and a
   spare day so that a card forgotten at its first review is relearned and seen again.
3. Spread: each day takes an even share of the cards still to introduce, as far as the
   minutes left after that day's expected reviews allow; what does not fit by the last
   introduction day is dropped, least asked first.
4. Forecast: each card's recall at noon on the date, as FSRS predicts it, averaged over
   every way its reviews can go (recalled with the predicted probability: Good, else
   Again). A theme is recalled when any of its cards is; the share is weighted by how many
   of the companies' write-ups asked each theme.
5. The last sitting: every planned card in review whose predicted recall at the interview
   is below `FINAL_RECALL` is reviewed once more the day before the date.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any

from quizzer.bank.model import Bank, Filters, Question
from quizzer.bank.order import asked_count, new_card_order, theme_counts
from quizzer.errors import QuizzerError, UnknownIdError, unknown_message
from quizzer.review.settings import PLAN_TARGET_KEY

if TYPE_CHECKING:
    from fsrs import Card, Scheduler

    from quizzer.review.service import ReviewService

TARGET_KEY = PLAN_TARGET_KEY  # {"companies": [...], "date": "YYYY-MM-DD", "minutes": n}
DEFAULT_MINUTES = 30
DEFAULT_NEW_MINUTES = 1.5  # a new card's first day: reading it and its learning steps
DEFAULT_REVIEW_MINUTES = 0.5
MIN_NEW_SAMPLES = 10  # new cards with timed ratings before the history's figure is used
MIN_REVIEW_SAMPLES = 30
LONGEST_RATING = timedelta(minutes=5)  # a longer one counts as this (the user was away)
HISTORY_WINDOW = 5000  # the most recent timed ratings the estimate reads
FINAL_RECALL = 0.95  # the day before the date, cards below this are reviewed once more
SITTING = timedelta(hours=1)  # a card due within this of a sitting's start is seen in it
INTERVIEW_HOUR = 12
MAX_DAYS = 365  # a plan's horizon: day-by-day forecasts beyond a year mean little
PRUNE = 1e-3  # a branch of a card's future less likely than this follows its sibling


class PlanError(QuizzerError):
    """A plan target that cannot be used: a bad date, or minutes that are not positive."""


@dataclass(frozen=True, slots=True)
class PlanTarget:
    """What the learner studies for: companies, the interview date, minutes a day."""

    companies: tuple[str, ...]
    date: date
    minutes_per_day: int = DEFAULT_MINUTES

    def to_json(self) -> str:
        """The stored form (a settings value)."""
        data = {
            "companies": list(self.companies),
            "date": self.date.isoformat(),
            "minutes": self.minutes_per_day,
        }
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> PlanTarget | None:
        """The stored target, or None when the value is missing or damaged."""
        try:
            data = json.loads(text)
            return cls(
                tuple(str(c) for c in data["companies"]),
                date.fromisoformat(data["date"]),
                int(data["minutes"]),
            )
        except (ValueError, TypeError, KeyError):
            return None


def parse_date(text: str) -> date:
    """'2026-04-01' -> date; anything else is one clear `PlanError`."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise PlanError(f"'{text}' is not a date (use YYYY-MM-DD, e.g. 2026-04-01)") from None


def make_target(
    bank: Bank, companies: Sequence[str], when: date, minutes: int, today: date
) -> PlanTarget:
    """A checked target: known companies, a date after today and within `MAX_DAYS`,
    positive minutes."""
    if not companies:
        raise PlanError("name at least one company with --company (see quizzer companies)")
    for company in companies:
        if company not in bank.companies:
            raise UnknownIdError(unknown_message("company", company, bank.companies))
    if when <= today:
        raise PlanError(f"the interview date {when} must be after today ({today})")
    if (when - today).days > MAX_DAYS:
        raise PlanError(
            f"the interview date {when} is more than {MAX_DAYS} days away; a plan covers "
            f"at most {MAX_DAYS} days (pick a date up to {today + timedelta(days=MAX_DAYS)})"
        )
    if minutes <= 0:
        raise PlanError(f"minutes per day must be more than 0 (got {minutes})")
    return PlanTarget(tuple(dict.fromkeys(companies)), when, minutes)


# -- the result ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlanDay:
    """One day of the plan: new cards, expected reviews and minutes, themes covered."""

    day: date
    new: list[str]
    reviews: float  # expected reviews (final ones included), new cards' first day aside
    minutes: float
    covered: float  # weighted share of the asked themes with a card started by day's end
    ready: float  # forecast recall on the date from the cards started by day's end
    final: bool = False  # the last sitting: weak cards get one more review


@dataclass(frozen=True, slots=True)
class Budget:
    """Minutes a new card's first day and a review take, and where the figures come from."""

    new_minutes: float = DEFAULT_NEW_MINUTES
    review_minutes: float = DEFAULT_REVIEW_MINUTES
    source: str = "default"  # "default" or "your history"


@dataclass(frozen=True, slots=True)
class Plan:
    """A derived plan: its days, the cards kept and dropped, and the forecast."""

    target: PlanTarget
    today: date
    days: list[PlanDay]
    cards: list[str]  # every planned card: already started ones, then those to introduce
    dropped: list[str]  # least asked first
    forecast: float  # expected weighted share of asked themes recalled on the date
    recall: dict[str, float]  # card -> expected recall at the interview
    margin_days: int
    budget: Budget
    final_today: list[str] = field(default_factory=list)  # today's final reviews

    @property
    def last_intro(self) -> date:
        """The last day a new card may be introduced."""
        return self.target.date - timedelta(days=self.margin_days)

    @property
    def new_today(self) -> list[str]:
        """Today's new cards, in their order."""
        return self.days[0].new if self.days and self.days[0].day == self.today else []

    @property
    def too_close(self) -> bool:
        """True when no new card can be introduced any more."""
        return self.last_intro < self.today

    def notes(self) -> list[str]:
        """What the learner should know: the date too close, cards dropped."""
        out: list[str] = []
        if self.dropped and self.too_close:
            out.append(
                f"The date is too close to learn new cards (the last day for one is "
                f"{self.margin_days} days before it): {len(self.dropped)} not started "
                "are left out."
            )
        elif self.dropped:
            out.append(
                f"{self.target.minutes_per_day} minutes a day until {self.last_intro} leave "
                f"room for {len(self.cards) - len(self.dropped)} of {len(self.cards)} cards: "
                f"{len(self.dropped)} are left out, least asked first."
            )
        return out


# -- reading the state ----------------------------------------------------------------------


def stored_target(service: ReviewService) -> PlanTarget | None:
    """The active plan's target, or None."""
    with service.reads() as reads:
        rows = reads.settings(TARGET_KEY)
    text = rows.get(TARGET_KEY)
    return PlanTarget.from_json(text) if text else None


def save_target(service: ReviewService, target: PlanTarget | None) -> None:
    """Store the target (None clears the plan)."""
    from quizzer.db.settings import SettingsStore

    store = SettingsStore(service.sessions)  # type: ignore[arg-type]
    store.set_text(TARGET_KEY, target.to_json() if target else "null")


def local_today(service: ReviewService) -> date:
    """Today's study day as a calendar date."""
    start = service.day.start_of_day(service.clock())
    tz = service.day.tz
    return (start.astimezone(tz) if tz else start.astimezone()).date()


def interview_time(service: ReviewService, when: date) -> datetime:
    """Noon on the interview day, in the study day's time zone."""
    tz = service.day.tz
    at = datetime.combine(when, time(INTERVIEW_HOUR), tzinfo=tz)
    return at if tz else datetime.combine(when, time(INTERVIEW_HOUR)).astimezone()


def estimate_budget(service: ReviewService) -> Budget:
    """Minutes per new card and per review from the timed ratings, else the defaults."""
    from sqlalchemy import select

    from quizzer.db.models import ReviewRow

    query = (
        select(ReviewRow.state_before, ReviewRow.duration_ms)
        .where(ReviewRow.duration_ms.is_not(None))
        .order_by(ReviewRow.id.desc())
        .limit(HISTORY_WINDOW)
    )
    with service.sessions() as session:
        rows = session.execute(query).all()
    cap = LONGEST_RATING.total_seconds() * 1000
    learning_ms = review_ms = 0.0
    new_cards = reviews = 0
    for state_before, ms in rows:
        ms = min(max(ms, 0), cap)
        if state_before in (None, 1):
            learning_ms += ms
            new_cards += state_before is None
        else:
            review_ms += ms
            reviews += 1
    budget = Budget()
    if new_cards >= MIN_NEW_SAMPLES and reviews >= MIN_REVIEW_SAMPLES:
        budget = Budget(
            learning_ms / new_cards / 60000, review_ms / reviews / 60000, "your history"
        )
    return budget


# -- each card's future -----------------------------------------------------------------------


@dataclass
class _Future:
    """Expected recall at the interview, and expected reviews per sitting."""

    recall: float
    load: list[float]


class _Timeline:
    """The sittings to the date and how a card moves through them."""

    def __init__(self, scheduler: Scheduler, sittings: list[datetime], interview: datetime):
        self.scheduler = scheduler
        self.sittings = sittings
        self.interview = interview
        self._new: dict[int, _Future] = {}

    def new_card(self, k: int) -> _Future:
        """The future of a card introduced in sitting `k` (the same for every new card)."""
        if k not in self._new:
            self._new[k] = self.walk(_fresh(self.sittings[k]), self.sittings[k], k)
        return self._new[k]

    def sitting_of(self, at: datetime) -> int | None:
        """The first sitting in which a card due at `at` is seen."""
        k = bisect_left(self.sittings, at - SITTING)  # sittings are in time order
        return k if k < len(self.sittings) else None

    def next_review(self, card: Card, after: datetime) -> tuple[datetime, int] | None:
        """When the card is seen next (and in which sitting), or None before the date.

        A card in review that would not come up in the last sitting is brought into it
        when its recall at the interview would be below `FINAL_RECALL`."""
        from fsrs import State

        due = max(card.due, after)
        k = self.sitting_of(due)
        last = len(self.sittings) - 1
        if card.state == State.Review and last >= 0 and k != last:
            final = self.sittings[last]
            in_last = k is not None and k < last
            if not in_last and after < final and self.weak(card):
                return final, last
        if k is None:
            return None
        return max(self.sittings[k], due), k

    def weak(self, card: Card) -> bool:
        """Whether the card's recall at the interview would be below `FINAL_RECALL`."""
        return self.recall_at(card, self.interview) < FINAL_RECALL

    def recall_at(self, card: Card, at: datetime) -> float:
        """FSRS's recall probability of `card` at `at` (0 for a card never seen)."""
        if card.last_review is None:
            return 0.0
        return float(self.scheduler.get_card_retrievability(card, at))

    def walk(self, card: Card, start: datetime, intro: int | None = None) -> _Future:
        """Every way the card's reviews can go from `start` to the date, weighted by how
        likely each is. `intro`: the sitting it is introduced in (its first day is the new
        card's cost, not reviews)."""
        from fsrs import Rating

        future = _Future(0.0, [0.0] * len(self.sittings))
        stack: list[tuple[Card, datetime, float]] = [(card, start, 1.0)]
        while stack:
            current, at, weight = stack.pop()
            nxt = (at, intro) if current.last_review is None and intro is not None else None
            nxt = nxt or self.next_review(current, at)
            if nxt is None or nxt[0] >= self.interview:
                future.recall += weight * self.recall_at(current, self.interview)
                continue
            when, k = nxt
            if k != intro:
                future.load[k] += weight
            p = self.recall_at(current, when)
            branches = [(Rating.Good, p), (Rating.Again, 1 - p)]
            kept = [(r, c) for r, c in branches if c > 0 and weight * c >= PRUNE]
            kept = kept or [max(branches, key=lambda b: b[1])]
            total = sum(c for _, c in kept)
            for rating, c in kept:
                after, _ = self.scheduler.review_card(current, rating, when)
                stack.append((after, when, weight * c / total))
        return future


def _fresh(at: datetime) -> Card:
    from fsrs import Card, State

    return Card(card_id=1, state=State.Learning, step=0, due=at)


def margin_days(scheduler: Scheduler, at: datetime) -> int:
    """Days before the date the last new card may come: the first interval FSRS gives a
    new card (forgotten once, then its learning steps), plus a spare day to relearn it
    after a lapse at that first review, and never fewer than 3."""
    from fsrs import Rating, State

    card, _ = scheduler.review_card(_fresh(at), Rating.Again, at)
    now = at
    while card.state != State.Review:
        now = card.due
        card, _ = scheduler.review_card(card, Rating.Good, now)
    first = (card.due - now).total_seconds() / 86400
    return max(3, math.ceil(first) + 2)


def forecast_scheduler(service: ReviewService) -> Scheduler:
    """The service's scheduler without fuzz: a forecast must not draw random intervals."""
    from fsrs import Scheduler

    s = service.scheduler
    return Scheduler(
        parameters=s.parameters,
        desired_retention=s.desired_retention,
        learning_steps=s.learning_steps,
        relearning_steps=s.relearning_steps,
        maximum_interval=s.maximum_interval,
        enable_fuzzing=False,
    )


# -- building the plan ----------------------------------------------------------------------


def planned_questions(
    service: ReviewService, companies: Iterable[str], suspended: set[str]
) -> list[Question]:
    """The cards for these companies' asked themes, in the new-card order."""
    bank = service.bank
    counts = theme_counts(bank, companies)
    chosen = [
        q
        for q in bank.questions.values()
        if q.id not in suspended and any(counts[t] for t in q.themes)
    ]
    prefs = service.preferences(Filters(companies=tuple(companies)))
    return new_card_order(bank, chosen, prefs)


def theme_share(bank: Bank, companies: Iterable[str], recall: dict[str, float]) -> float:
    """Expected weighted share of the companies' asked themes recalled, given each card's
    recall probability: a theme is recalled when any of its cards is."""
    counts = theme_counts(bank, companies)
    missed: dict[str, float] = {t: 1.0 for t in counts}
    for qid, r in recall.items():
        for theme in bank.questions[qid].themes:
            if theme in missed:
                missed[theme] *= 1 - r
    total = sum(counts.values())
    return sum(counts[t] * (1 - m) for t, m in missed.items()) / total if total else 0.0


def build_plan(service: ReviewService, target: PlanTarget, budget: Budget | None = None) -> Plan:
    """The plan from today's state (see the module doc)."""
    from quizzer.db import converters
    from quizzer.errors import CorruptCardError

    now = service.clock()
    today = local_today(service)
    budget = budget or estimate_budget(service)
    with service.reads() as reads:
        rows = reads.all_cards()
        introduced_today = reads.counts_since(service.day.start_of_day(now))[1]
    suspended = {qid for qid, row in rows.items() if row.suspended}
    questions = planned_questions(service, target.companies, suspended)
    scheduler = forecast_scheduler(service)
    n_days = max(0, (target.date - today).days)
    sittings = [now + timedelta(days=k) for k in range(n_days)]
    line = _Timeline(scheduler, sittings, interview_time(service, target.date))
    margin = margin_days(scheduler, now)
    last_intro = n_days - margin  # the last sitting a new card may come in
    load = [0.0] * n_days
    recall: dict[str, float] = {}
    started: list[str] = []
    fresh: list[Question] = []
    final_today: list[str] = []
    for q in questions:
        row = rows.get(q.id)
        if row is None or row.last_review is None:
            fresh.append(q)
            continue
        try:
            card = converters.to_fsrs(row, now, q.id)
        except CorruptCardError:
            continue
        started.append(q.id)
        future = line.walk(card, now)
        recall[q.id] = future.recall
        load = [a + b for a, b in zip(load, future.load, strict=True)]
        if n_days == 1 and _final_now(line, card, service.day.start_of_day(now), now):
            final_today.append(q.id)
    rank = sorted(fresh, key=lambda q: -asked_count(service.bank, q, target.companies))
    kept = fresh
    placed = _spread(line, kept, load, last_intro, budget, target, introduced_today)
    while (fit := sum(len(p) for p in placed)) < len(kept):  # keep the most asked that fit
        chosen = {q.id for q in rank[:fit]}
        kept = [q for q in fresh if q.id in chosen]
        placed = _spread(line, kept, load, last_intro, budget, target, introduced_today)
    on_day = {qid: k for k, ids in enumerate(placed) for qid in ids}
    for qid, k in on_day.items():
        recall[qid] = line.new_card(k).recall
        load = [a + b for a, b in zip(load, line.new_card(k).load, strict=True)]
    dropped = [q for q in fresh if q.id not in on_day]
    dropped.sort(key=lambda q: asked_count(service.bank, q, target.companies))
    days = _days(service, target, today, placed, load, started, budget, recall)
    return Plan(
        target,
        today,
        days,
        started + [q.id for q in fresh],
        [q.id for q in dropped],
        theme_share(service.bank, target.companies, recall),
        recall,
        margin,
        budget,
        final_today,
    )


def _final_now(line: _Timeline, card: Card, day_start: datetime, now: datetime) -> bool:
    """Whether the card is one of today's final reviews (today being the last sitting)."""
    from fsrs import State

    seen_today = card.last_review is not None and card.last_review >= day_start
    if card.state != State.Review or seen_today or card.due <= now + SITTING:
        return False
    return line.weak(card)


def _spread(
    line: _Timeline,
    fresh: list[Question],
    load: list[float],
    last_intro: int,
    budget: Budget,
    target: PlanTarget,
    introduced_today: int,
) -> list[list[str]]:
    """New cards per sitting: an even share of what is left, within the minutes."""
    load = list(load)
    placed: list[list[str]] = [[] for _ in line.sittings]
    queue = [q.id for q in fresh]
    for k in range(max(0, last_intro + 1)):
        if not queue or k >= len(line.sittings):
            break
        days_left = last_intro - k + 1
        done = introduced_today if k == 0 else 0
        share = math.ceil((len(queue) + done) / days_left) - done
        spare = target.minutes_per_day - load[k] * budget.review_minutes - done * budget.new_minutes
        room = max(0, math.floor(spare / budget.new_minutes))
        count = max(0, min(share, room, len(queue)))
        if count:
            placed[k], queue = queue[:count], queue[count:]
            future = line.new_card(k)
            load = [a + count * b for a, b in zip(load, future.load, strict=True)]
    return placed


def _days(
    service: ReviewService,
    target: PlanTarget,
    today: date,
    placed: list[list[str]],
    load: list[float],
    started: list[str],
    budget: Budget,
    recall: dict[str, float],
) -> list[PlanDay]:
    """Each day's cards and minutes, the themes started by its end, and the forecast from
    those cards alone (each recalled on the date as the whole plan predicts)."""
    bank = service.bank
    counts = theme_counts(bank, target.companies)
    total = sum(counts.values()) or 1
    covered: Counter[str] = Counter()
    so_far = {qid: recall.get(qid, 0.0) for qid in started}
    for qid in started:
        covered.update(t for t in bank.questions[qid].themes if t in counts)
    out: list[PlanDay] = []
    for k, ids in enumerate(placed):
        for qid in ids:
            covered.update(t for t in bank.questions[qid].themes if t in counts)
            so_far[qid] = recall.get(qid, 0.0)
        share = sum(counts[t] for t in covered) / total
        ready = theme_share(bank, target.companies, so_far)
        minutes = len(ids) * budget.new_minutes + load[k] * budget.review_minutes
        day = today + timedelta(days=k)
        out.append(PlanDay(day, ids, load[k], minutes, share, ready, k == len(placed) - 1))
    return out


def todays_cards(service: ReviewService, target: PlanTarget) -> tuple[list[str], list[str]] | None:
    """(today's new cards, today's final reviews) while the plan runs; None once its date
    has come."""
    if target.date <= local_today(service):
        return None
    plan = build_plan(service, target)
    return plan.new_today, plan.final_today


def plan_summary(plan: Plan) -> dict[str, Any]:
    """The plan as plain data (for --json and tests)."""
    return {
        "companies": list(plan.target.companies),
        "date": plan.target.date.isoformat(),
        "minutes_per_day": plan.target.minutes_per_day,
        "forecast": round(plan.forecast, 4),
        "cards": len(plan.cards),
        "dropped": plan.dropped,
        "last_new_day": plan.last_intro.isoformat(),
        "margin_days": plan.margin_days,
        "minutes_per_new_card": round(plan.budget.new_minutes, 2),
        "minutes_per_review": round(plan.budget.review_minutes, 2),
        "budget_from": plan.budget.source,
        "days": [
            {
                "day": d.day.isoformat(),
                "new": d.new,
                "reviews": round(d.reviews, 1),
                "minutes": round(d.minutes, 1),
                "covered": round(d.covered, 3),
                "ready": round(d.ready, 4),
                "final": d.final,
            }
            for d in plan.days
        ],
        "notes": plan.notes(),
    }
