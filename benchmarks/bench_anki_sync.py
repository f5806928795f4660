"""Anki round trip on 10k cards / 100k reviews, against the plain export in the same run.

Run: python benchmarks/bench_anki_sync.py [--cards 10000] [--reviews 100000]
Times: the plain .apkg export (baseline), the export with schedule and review log, reading
that package back, and merging its reviews into an empty database and (idempotently) into
the database it came from.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import UTC
from pathlib import Path

from fsrs import Scheduler

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import NOW, fill_history, synthetic_bank

from quizzer.db.engine import open_database
from quizzer.db.history import import_records
from quizzer.export.anki import export_apkg
from quizzer.export.anki_import import read_anki_reviews
from quizzer.export.anki_schedule import export_with_schedule, read_schedule
from quizzer.review.clock import DayBoundary


def timed(label: str, fn, baseline: float | None = None):
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    ratio = f"   ratio {seconds / baseline:.2f}" if baseline else ""
    print(f"{label:52}{seconds:8.2f} s{ratio}")
    return seconds, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=100_000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    bank = synthetic_bank(args.cards)
    questions = list(bank.questions.values())
    sessions = open_database(f"sqlite:///{tmp / 'src.db'}")
    fill_history(sessions, bank, args.reviews)
    print(f"history: {args.cards} cards, {args.reviews} reviews")
    base, _ = timed("plain export (baseline)", lambda: export_apkg(bank, questions, tmp / "p.apkg"))
    cards, reviews = read_schedule(sessions, bank, NOW)
    timed(
        "export with schedule and review log",
        lambda: export_with_schedule(
            bank,
            questions,
            cards,
            reviews,
            tmp / "s.apkg",
            now=NOW,
            day=DayBoundary(tz=UTC, hour=4),
            retention=0.9,
        ),
        base,
    )
    _, found = timed("read the package back", lambda: read_anki_reviews(tmp / "s.apkg", bank), base)
    empty = open_database(f"sqlite:///{tmp / 'empty.db'}")
    scheduler = Scheduler()
    _, report = timed(
        "merge into an empty database (adds every review)",
        lambda: import_records(empty, list(found.records), scheduler),
        base,
    )
    assert report.reviews_added == len(found.records)
    _, again = timed(
        "merge into the source database (adds nothing)",
        lambda: import_records(sessions, list(found.records), scheduler),
        base,
    )
    print(f"reviews read: {len(found.records)}; added again: {again.reviews_added}")


if __name__ == "__main__":
    main()
