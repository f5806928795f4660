"""`quizzer plan` build time on the real bank, against one full due query in the same run.

Run: python benchmarks/bench_plan.py [--companies 1 4 12] [--days 19 90 365] [--runs 3]

Each case plans for the first N companies of `bank/companies.yaml`
over D days on a fresh SQLite database: first with nothing studied, then after a simulated
month of study in which half the planned cards were learned (so the forecast walks cards
in review as well as new ones). Prints the median build time and its ratio to the due
query (every due card, ordered) timed on the same database.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from quizzer.bank.loader import load_bank
from quizzer.bank.model import Bank
from quizzer.db.engine import open_database
from quizzer.review import plan as P
from quizzer.review import queries
from quizzer.review.clock import DayBoundary, FixedClock
from quizzer.review.model import Rating
from quizzer.review.service import ReviewService
from quizzer.review.settings import StudySettings

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)


def median_s(fn: Callable[[], object], runs: int) -> float:
    """The median wall time of `runs` calls of fn, in seconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def studied(service: ReviewService, clock: FixedClock, cards: list[str], days: int) -> None:
    """A month before the plan starts: the first half of `cards` learned, Good or Again."""
    rng = random.Random(3)
    half = cards[: len(cards) // 2]
    for k in range(days):
        clock.now = T0 - timedelta(days=days - k)
        for qid in half[k::days]:
            service.rate(qid, Rating.GOOD, duration_ms=20_000)
        for qid, card in service.cards().items():
            if card.state == "review" and card.due is not None and card.due <= clock.now:
                rating = Rating.GOOD if rng.random() < 0.9 else Rating.AGAIN
                service.rate(qid, rating, duration_ms=10_000)
    clock.now = T0


def case(bank: Bank, companies: tuple[str, ...], days: int, history: str, runs: int) -> str:
    """One row: the plan's build time on a fresh database, and its ratio to a due query."""
    clock = FixedClock(T0)
    sessions = open_database(f"sqlite:///{Path(tempfile.mkdtemp()) / 'plan.db'}")
    service = ReviewService(
        sessions,
        bank,
        clock=clock,
        settings=StudySettings(),
        fuzz=False,
        day=DayBoundary(tz=UTC, hour=4),
    )
    target = P.PlanTarget(companies, (T0 + timedelta(days=days)).date(), 30)
    if history != "none":
        studied(service, clock, list(P.build_plan(service, target).cards), 30)

    def due() -> object:
        with sessions() as db:
            return queries.OrmReads(db).due_ids(clock.now, None, None)

    due_s = median_s(due, runs)
    plan = P.build_plan(service, target)
    build_s = median_s(lambda: P.build_plan(service, target), runs)
    return (
        f"{len(companies):>9} {days:>5} {history:>8} {len(plan.cards):>6}"
        f" {build_s * 1000:>7.0f}ms {build_s / due_s:>6.0f}x"
    )


def main() -> None:
    """Time each (companies, days) case, fresh and after a month of study."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--companies", type=int, nargs="+", default=[1, 4, 12])
    parser.add_argument("--days", type=int, nargs="+", default=[19, 90, 365])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    bank = load_bank()
    order = tuple(bank.companies)
    print(f"{'companies':>9} {'days':>5} {'history':>8} {'cards':>6} {'build':>9} {'x due':>7}")
    for n in args.companies:
        for days in args.days:
            for history in ("none", "a month"):
                print(case(bank, order[:n], days, history, args.runs))


if __name__ == "__main__":
    main()
