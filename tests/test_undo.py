"""Undo is scoped to the caller and exact; the interval a button shows is the one applied.

Every test runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import UTC, timedelta

import pytest
from fsrs import Scheduler
from sqlalchemy import select

from quizzer.db.engine import open_database
from quizzer.db.models import CardRow, ReviewRow
from quizzer.review.clock import DayBoundary
from quizzer.review.model import Rating
from quizzer.review.service import ReviewService
from quizzer.review.session import StudySession


@pytest.fixture
def db_url(any_db_url: str) -> str:
    return any_db_url


def _other(db_url, small_bank, clock, *, fuzz: bool = False) -> ReviewService:
    """A second window or process on the same database."""
    return ReviewService(
        open_database(db_url),
        small_bank,
        clock=clock,
        scheduler=Scheduler(enable_fuzzing=fuzz),
        day=DayBoundary(tz=UTC, hour=4),
    )


def _row(service, qid):
    with service.sessions() as s:
        row = s.get(CardRow, qid)
        return (
            None if row is None else {c.key: getattr(row, c.key) for c in CardRow.__table__.columns}
        )


def _review_ids(service):
    with service.sessions() as s:
        return list(s.scalars(select(ReviewRow.id).order_by(ReviewRow.id)))


def test_undo_takes_back_only_this_callers_rating(service, db_url, small_bank, clock):
    other = _other(db_url, small_bank, clock)
    service.rate("t-kv", Rating.GOOD)
    mine = _review_ids(service)
    other.rate("t-ring", Rating.AGAIN)  # written after mine: the newest in the database
    theirs = _row(other, "t-ring")
    result = service.undo()
    assert (result.kind, result.question_id, result.undone) == ("rate", "t-kv", True)
    assert _row(service, "t-kv") is None
    assert _row(service, "t-ring") == theirs
    assert len(_review_ids(service)) == 1 and _review_ids(service) != mine


def test_stale_undo_changes_nothing(service, db_url, small_bank, clock):
    other = _other(db_url, small_bank, clock)
    service.rate("t-kv", Rating.GOOD)
    clock.advance(timedelta(minutes=11))
    other.rate("t-kv", Rating.GOOD)  # the same card, rated again elsewhere
    before = (_row(service, "t-kv"), _review_ids(service))
    result = service.undo()
    assert result.undone is False and result.question_id == "t-kv"
    assert (_row(service, "t-kv"), _review_ids(service)) == before


def test_undo_of_suspend_after_a_rating_keeps_the_rating(service, clock):
    service.rate("t-kv", Rating.GOOD)
    rated = _row(service, "t-kv")
    service.suspend("t-kv")
    assert _row(service, "t-kv")["suspended"] is True
    assert service.undo().kind == "suspend"
    assert _row(service, "t-kv") == rated  # exactly the state after the rating
    assert service.undo().kind == "rate"
    assert _row(service, "t-kv") is None


@pytest.mark.parametrize("action", ["bury", "reset", "suspend"])
def test_undo_restores_the_exact_row_before_each_action(service, clock, action):
    service.rate("t-ring", Rating.GOOD)
    clock.advance(timedelta(days=3))
    service.rate("t-ring", Rating.GOOD)
    before = _row(service, "t-ring")
    getattr(service, action)("t-ring")
    assert _row(service, "t-ring") != before
    result = service.undo()
    assert (result.kind, result.undone) == (action, True)
    assert _row(service, "t-ring") == before


def test_sitting_undo_brings_a_suspended_card_back(service):
    sitting = StudySession(service)
    sitting.load()
    first = sitting.current
    sitting.rate(Rating.GOOD)
    second = sitting.current
    sitting.suspend()
    assert sitting.current != second
    result = sitting.undo()
    assert result.kind == "suspend" and sitting.current == second
    assert _row(service, second) is None or _row(service, second)["suspended"] is False
    assert sitting.undo().question_id == first and len(sitting.done) == 0


def test_with_fuzz_on_the_preview_is_the_interval_applied(db_url, small_bank, clock):
    service = _other(db_url, small_bank, clock, fuzz=True)
    mismatches = 0
    for step in range(60):
        qid = sorted(small_bank.questions)[step % len(small_bank.questions)]
        preview = service.preview(qid)
        rating = Rating((step % 3) + 2)  # Hard, Good, Easy: intervals long enough to fuzz
        outcome = service.rate(qid, rating)
        mismatches += outcome.interval != preview[rating]
        clock.advance(timedelta(days=7 + step % 5))
    assert mismatches == 0


CHILD = textwrap.dedent(
    """
    import json, random, sys, time
    from quizzer.bank.loader import check_bank
    from quizzer.db.engine import open_database
    from quizzer.review.model import Rating
    from quizzer.review.service import ReviewService
    from quizzer.db.models import ReviewRow

    url, seed, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    from pathlib import Path
    bank, _ = check_bank([Path(sys.argv[4])])
    service = ReviewService(open_database(url), bank)
    rng = random.Random(seed)
    kept, undone, stale = [], [], []
    ids = sorted(bank.questions)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if kept and rng.random() < 0.15:
            result = service.undo()  # pops the record of kept[-1], undone or stale
            (undone if result.undone else stale).append(kept.pop())
            continue
        service.rate(rng.choice(ids), Rating(rng.randint(1, 4)))
        with service.sessions() as session:  # ids can be reused after a delete: key by time
            row = session.get(ReviewRow, service.last_action.review_id)
            kept.append([row.question_id, row.reviewed_at.isoformat()])
    print(json.dumps({"kept": kept + stale, "undone": undone}))
    """
)


@pytest.mark.slow
def test_two_processes_rating_and_undoing_lose_nothing(db_url, tmp_path):
    from tests.conftest import FIXTURES

    open_database(db_url)
    script = tmp_path / "rater.py"
    script.write_text(CHILD)
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), db_url, str(seed), "4", str(FIXTURES / "small")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
        assert "Traceback" not in err and "locked" not in err
        results.append(json.loads(out))
    kept = sorted(tuple(k) for r in results for k in r["kept"])
    undone = {tuple(k) for r in results for k in r["undone"]}
    with open_database(db_url)() as session:
        stored = sorted(
            (q, t.isoformat())
            for q, t in session.execute(select(ReviewRow.question_id, ReviewRow.reviewed_at))
        )
    assert len(kept) > 20 and undone
    assert stored == kept  # every acknowledged rating not undone by its own process
    assert not (set(stored) & undone)
