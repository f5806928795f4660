"""The due query and the home overview on PostgreSQL against SQLite, same history, same run.

Run: python benchmarks/bench_postgres.py [--cards 10000] [--reviews 1000000] [--url URL]
Without --url (or $QUIZZER_TEST_PG_URL) a throwaway server is started on a loopback port
with the installed PostgreSQL binaries. Prints medians and the PostgreSQL / SQLite ratio.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from datetime import UTC
from pathlib import Path

from fsrs import Scheduler

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_storage import median_ms
from synthetic import NOW, fill_history, synthetic_bank

from quizzer.db.engine import open_database
from quizzer.review import queries, stats
from quizzer.review.clock import DayBoundary, FixedClock
from quizzer.review.service import ReviewService
from tests import pg_server


def _fresh_pg(server: str) -> str:
    import psycopg
    from sqlalchemy.engine import make_url

    base = make_url(server)
    name = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(base.set(drivername="postgresql").render_as_string(False)) as conn:
        conn.autocommit = True
        conn.execute(f'CREATE DATABASE "{name}"')
    return base.set(database=name).render_as_string(hide_password=False)


def measure(url: str, bank, reviews: int) -> dict[str, float]:
    sessions = open_database(url)
    start = time.perf_counter()
    fill_history(sessions, bank, reviews)
    built = time.perf_counter() - start
    if url.startswith("postgresql"):
        with sessions.kw["bind"].connect() as conn:  # fresh planner statistics, as autovacuum would
            conn.exec_driver_sql("ANALYZE")
            conn.commit()
    service = ReviewService(
        sessions,
        bank,
        clock=FixedClock(NOW),
        scheduler=Scheduler(enable_fuzzing=False),
        day=DayBoundary(tz=UTC, hour=4),
    )

    def due() -> list[str]:
        with sessions() as s:
            return queries.OrmReads(s).due_ids(NOW, None, 200)

    targets = [c.id for c in sorted(bank.companies.values(), key=lambda c: -c.interviews)][:8]
    return {
        "build_s": built,
        "due_ms": median_ms(due, runs=15),
        "queue_ms": median_ms(service.queue, runs=5),
        "overview_ms": median_ms(lambda: stats.overview(service, targets), runs=3),
        "first_due": due()[:5],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--url", default=os.environ.get("QUIZZER_TEST_PG_URL"))
    args = parser.parse_args()
    folder = None
    server = args.url
    if server is None:
        folder = Path(tempfile.mkdtemp(prefix="quizzer-bench-pg-"))
        server = pg_server.start(folder)
    try:
        bank = synthetic_bank(args.cards)
        tmp = Path(tempfile.mkdtemp())
        lite = measure(f"sqlite:///{tmp / 'bench.db'}", bank, args.reviews)
        pg = measure(_fresh_pg(server), bank, args.reviews)
    finally:
        if folder is not None:
            pg_server.stop(folder)
    assert lite["first_due"] == pg["first_due"], "both databases must give the same queue"
    print(f"history: {args.cards} cards, {args.reviews} reviews")
    print(f"{'':34}{'SQLite':>10}{'PostgreSQL':>12}{'ratio':>8}")
    for key, label in [
        ("build_s", "bulk load (s)"),
        ("due_ms", "due query, 200 ids (ms)"),
        ("queue_ms", "study queue (ms)"),
        ("overview_ms", "home overview (ms)"),
    ]:
        print(f"{label:34}{lite[key]:>10.1f}{pg[key]:>12.1f}{pg[key] / lite[key]:>8.2f}")


if __name__ == "__main__":
    main()
