"""Due queue, stats and `quizzer list --due` on 10k cards and 1M reviews.

Run: python benchmarks/bench_storage.py [--cards 10000] [--reviews 1000000]
Prints medians, each against a baseline measured in the same run: the due query against
a full scan of the cards table sorted in Python, the quick (stdlib) due query against the
ORM one, and the streak against grouping every review's local day in Python.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, timedelta
from pathlib import Path

from fsrs import Scheduler
from sqlalchemy import select, text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import NOW, fill_history, synthetic_bank

from quizzer.db.engine import open_database
from quizzer.db.models import CardRow, ReviewRow
from quizzer.db.quick import QuickReader
from quizzer.review import queries, stats
from quizzer.review.clock import DayBoundary, FixedClock
from quizzer.review.service import ReviewService


def median_ms(fn, runs: int = 15) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    url = f"sqlite:///{tmp / 'bench.db'}"
    bank = synthetic_bank(args.cards)
    sessions = open_database(url)
    t0 = time.perf_counter()
    fill_history(sessions, bank, args.reviews)
    print(
        f"history: {args.cards} cards, {args.reviews} reviews, built in {time.perf_counter() - t0:.1f} s"
    )
    service = ReviewService(
        sessions,
        bank,
        clock=FixedClock(NOW),
        scheduler=Scheduler(enable_fuzzing=False),
        day=DayBoundary(tz=UTC, hour=4),  # UTC days, so the Python baseline can use dates
    )

    def due_query() -> list[str]:
        with sessions() as s:
            return queries.OrmReads(s).due_ids(NOW, None, 200)

    def python_sort() -> list[str]:  # baseline: fetch every card and order in Python
        with sessions() as s:
            rows = s.scalars(select(CardRow)).all()
        due = [r for r in rows if r.due <= NOW and not r.suspended]
        return [
            r.question_id
            for r in sorted(due, key=lambda r: (NOW - r.last_review) / r.stability)[::-1][:200]
        ]

    assert due_query() == python_sort()
    with sessions() as s:
        compiled = queries.due_query(NOW, None, 200).compile(
            dialect=s.get_bind().dialect, compile_kwargs={"literal_binds": True}
        )
        plan = s.execute(text("EXPLAIN QUERY PLAN " + str(compiled))).all()
    q_ms = median_ms(due_query)
    base_ms = median_ms(python_sort, runs=5)
    queue_ms = median_ms(service.queue, runs=5)
    print(f"due query (200 of {len(due_query())}+ due): {q_ms:.1f} ms   target < 50 ms")
    print(
        f"baseline, every card fetched and sorted in Python: {base_ms:.1f} ms   ratio {q_ms / base_ms:.2f}"
    )
    print(f"full study queue (due + ranked new, limits): {queue_ms:.1f} ms")
    print("plan: " + " | ".join(str(row[-1]) for row in plan))
    quick = QuickReader.open(url)
    assert quick is not None and quick.due_ids(NOW, None, 200) == due_query()
    quick_ms = median_ms(lambda: quick.due_ids(NOW, None, 200))
    print(
        f"quick due query (stdlib sqlite3): {quick_ms:.1f} ms   ratio to ORM {quick_ms / q_ms:.2f}"
    )
    stats_figures(service)
    cmd = [sys.executable, "-m", "quizzer", "--db", url, "list", "--due", "--json"]
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        runs.append(time.perf_counter() - start)
    print(
        f"quizzer list --due (process, built-in bank over this history): {statistics.median(runs) * 1000:.0f} ms"
    )


def stats_figures(service: ReviewService) -> None:
    def grouped_streak() -> int:  # baseline: every review of 400 days, grouped in Python
        start = service.day.start_of_day(NOW)
        with service.sessions() as s:
            times = s.scalars(
                select(ReviewRow.reviewed_at).where(
                    ReviewRow.reviewed_at >= start - timedelta(days=400)
                )
            )
            days = {service.day.start_of_day(t).date() for t in times}
        day = service.day.start_of_day(NOW)
        if day.date() not in days:
            day -= timedelta(days=1)
        count = 0
        while day.date() in days:
            count += 1
            day -= timedelta(days=1)
        return count

    assert stats.streak(service) == grouped_streak()
    streak_ms = median_ms(lambda: stats.streak(service), runs=5)
    base_ms = median_ms(grouped_streak, runs=3)
    print(
        f"streak ({stats.streak(service)} days, one indexed lookup a day): {streak_ms:.0f} ms   "
        f"baseline, every review's day in Python: {base_ms:.0f} ms   ratio {streak_ms / base_ms:.3f}"
    )
    targets = [c.id for c in sorted(service.bank.companies.values(), key=lambda c: -c.interviews)]
    overview_ms = median_ms(lambda: stats.overview(service, targets[:8]), runs=3)
    retention_ms = median_ms(lambda: stats.retention(service), runs=3)
    print(f"home overview (every card, counts, streak): {overview_ms:.0f} ms")
    print(f"30-day retention (SQL aggregate): {retention_ms:.0f} ms")


if __name__ == "__main__":
    main()
