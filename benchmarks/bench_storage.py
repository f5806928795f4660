"""Due queue and `quizzer list --due` on 10k cards and 1M reviews.

Run: python benchmarks/bench_storage.py [--cards 10000] [--reviews 1000000]
Prints medians, and the due query against a full scan of the cards table measured in the
same run (the baseline), so the index's share is visible.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fsrs import Scheduler
from sqlalchemy import select, text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import NOW, fill_history, synthetic_bank

from quizzer.db.engine import open_database
from quizzer.db.models import CardRow
from quizzer.review import queries
from quizzer.review.clock import FixedClock
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
        sessions, bank, clock=FixedClock(NOW), scheduler=Scheduler(enable_fuzzing=False)
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
    cmd = [sys.executable, "-m", "quizzer", "--db", url, "list", "--due", "--json"]
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        runs.append(time.perf_counter() - start)
    print(
        f"quizzer list --due (process, built-in bank over this history): {statistics.median(runs) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
