"""`quizzer optimize` on a large history: 10k cards and 1M reviews drawn from the FSRS model.

Run: python benchmarks/bench_optimize.py [--cards 10000] [--reviews 1000000]
Needs the optimizer extra (pip install -e ".[optimizer]"). The history is simulated from
known parameters (quizzer.review.simulate) at a desired retention of 0.99 over five years,
cards introduced in the first three months, cut to the first --reviews reviews, and written
to an SQLite file with the card rows it leaves. Prints each phase of the fit against one full due query (every due card,
ordered) timed in the same run, and the held-out scores.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from fsrs.scheduler import DEFAULT_PARAMETERS
from sqlalchemy import insert
from sqlalchemy.orm import Session, sessionmaker

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quizzer.db.engine import open_database
from quizzer.db.models import CardRow, ReviewRow
from quizzer.review import queries
from quizzer.review.optimize import fit, load_histories, score, split_by_card
from quizzer.review.simulate import START, TRUE_PARAMETERS, SimulatedReview, simulate_history

DAYS = 5 * 365
T = TypeVar("T")


def write(sessions: sessionmaker[Session], reviews: list[SimulatedReview]) -> None:
    """Review rows in bulk, then one card row per card from its last review."""
    last: dict[str, SimulatedReview] = {}
    with sessions.begin() as session:
        for start in range(0, len(reviews), 50_000):
            batch = reviews[start : start + 50_000]
            session.execute(
                insert(ReviewRow),
                [
                    {
                        "question_id": r.question_id,
                        "rating": r.rating,
                        "reviewed_at": r.reviewed_at,
                        "duration_ms": 6000,
                        "state_before": r.state_before,
                        "state_after": r.state_after,
                        "stability": r.stability,
                        "difficulty": r.difficulty,
                        "due_after": r.due_after,
                        "card_before": None,
                    }
                    for r in batch
                ],
            )
            last.update((r.question_id, r) for r in batch)
        session.execute(
            insert(CardRow),
            [
                {
                    "question_id": r.question_id,
                    "state": r.state_after,
                    "step": None,
                    "stability": r.stability,
                    "difficulty": r.difficulty,
                    "due": r.due_after,
                    "last_review": r.reviewed_at,
                    "reps": 1,
                    "lapses": 0,
                    "suspended": False,
                    "leech": False,
                    "created_at": START,
                }
                for r in last.values()
            ],
        )


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """fn's value and its wall time in seconds."""
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main() -> None:
    """Build the history, time the due query and each phase of the fit, print them."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    args = parser.parse_args()
    per_card = max(2, args.reviews // args.cards) + 10
    history, sim_s = timed(
        lambda: simulate_history(
            args.cards,
            DAYS,
            desired_retention=0.99,
            spread=0.05,
            max_reviews=per_card,
            seed=7,
            prefix="syn",
        )[: args.reviews]  # time order: the latest reviews are cut
    )
    url = f"sqlite:///{Path(tempfile.mkdtemp()) / 'bench.db'}"
    sessions = open_database(url)
    _, write_s = timed(lambda: write(sessions, history))
    print(
        f"history: {args.cards:,} cards, {len(history):,} reviews"
        f" (simulated in {sim_s:.1f} s, written in {write_s:.1f} s)"
    )
    now = max(r.reviewed_at for r in history)

    def due_query() -> list[str]:
        with sessions() as s:
            return queries.OrmReads(s).due_ids(now, None, None)

    due_runs = [timed(due_query)[1] for _ in range(5)]
    due_s = statistics.median(due_runs)
    print(f"baseline, one full due query ({len(due_query()):,} due cards): {due_s * 1000:.0f} ms")

    histories, load_s = timed(lambda: load_histories(sessions))
    train, test = split_by_card(histories)
    params, fit_s = timed(lambda: fit(train))
    (default, fitted, true), score_s = timed(
        lambda: [score(p, test) for p in (DEFAULT_PARAMETERS, params, TRUE_PARAMETERS)]
    )
    total = load_s + fit_s + score_s
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for name, seconds in (
        ("read the history", load_s),
        (f"fit ({len(train):,} cards)", fit_s),
        (f"score 3 parameter sets on {len(test):,} held-out cards", score_s),
        ("optimize in all", total),
    ):
        print(f"{name}: {seconds:.1f} s   ratio to the due query {seconds / due_s:,.0f}")
    print(f"peak memory of this process: {peak_mb:,.0f} MB")
    for name, s in (("default", default), ("fitted", fitted), ("true", true)):
        print(
            f"held-out {name:8} log loss {s.log_loss:.4f}  RMSE (bins) {s.rmse_bins:.4f}  n={s.reviews:,}"
        )


if __name__ == "__main__":
    main()
