"""The quick reads (stdlib sqlite3) answer exactly as the SQLAlchemy reads do.

`quizzer study` shows its first card through them, so any drift would show a different
queue before and after the database opens.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from quizzer.cli.main import entry
from quizzer.db.engine import make_engine, migrate, open_database
from quizzer.db.lazy import LazySessions
from quizzer.db.models import CardRow, ReviewRow
from quizzer.db.quick import QuickReader
from quizzer.review.model import Rating
from quizzer.review.queries import OrmReads
from quizzer.review.service import ReviewService

from .conftest import T0, quick_service

IDS = [f"q{n:03d}" for n in range(240)]
EDGES = ["edge-buried", "edge-due", "edge-nostab"]


def moment(rng: random.Random, around=T0, days: float = 30):
    """A time near `around`, with microseconds, sometimes exactly `around`."""
    if rng.random() < 0.05:
        return around
    return around + timedelta(seconds=rng.uniform(-days, days) * 86400)


def fill(url: str, seed: int) -> None:
    """Cards in every state, buried and suspended ones, and a review history."""
    rng = random.Random(seed)
    sessions = open_database(url)
    with sessions.begin() as s:
        for qid in rng.sample(IDS, 180):
            started = rng.random() < 0.8
            last = moment(rng, T0 - timedelta(days=10), 20) if started else None
            s.add(
                CardRow(
                    question_id=qid,
                    state=rng.choice([1, 2, 3]),
                    step=rng.choice([None, 0, 1]),
                    stability=rng.choice([None, rng.uniform(0.05, 400), rng.uniform(0.05, 4)])
                    if started
                    else None,
                    difficulty=rng.uniform(1, 10) if started else None,
                    due=moment(rng),
                    last_review=last,
                    reps=rng.randint(0, 30),
                    lapses=rng.randint(0, 9),
                    suspended=rng.random() < 0.1,
                    buried_until=moment(rng, days=2) if rng.random() < 0.15 else None,
                    leech=rng.random() < 0.05,
                    created_at=moment(rng, T0 - timedelta(days=60)),
                )
            )
        # Edges: buried exactly until now, due exactly now, started without a stability.
        s.add(CardRow(question_id="edge-buried", due=T0, buried_until=T0, created_at=T0))
        s.add(
            CardRow(
                question_id="edge-due",
                due=T0,
                last_review=T0 - timedelta(days=3),
                stability=3.0,
                created_at=T0,
            )
        )
        s.add(
            CardRow(
                question_id="edge-nostab",
                due=T0 - timedelta(days=1),
                last_review=T0 - timedelta(days=2),
                created_at=T0,
            )
        )
        for _ in range(600):
            s.add(
                ReviewRow(
                    question_id=rng.choice(IDS),
                    rating=rng.randint(1, 4),
                    reviewed_at=moment(rng, T0, 3),
                    state_before=rng.choice([None, 1, 2, 3]),
                    state_after=rng.choice([1, 2, 3]),
                    due_after=moment(rng),
                )
            )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_quick_reads_equal_orm_reads(tmp_path, seed):
    url = f"sqlite:///{tmp_path / 'q.db'}"
    fill(url, seed)
    quick = QuickReader.open(url)
    assert quick is not None
    rng = random.Random(seed)
    with open_database(url)() as session:
        orm = OrmReads(session)
        assert orm.due_ids(T0, None, None), "the data should have due cards"
        for now in [T0, T0 - timedelta(days=3), T0 + timedelta(days=5, microseconds=7)]:
            subset = [*rng.sample(IDS, 60), *EDGES]
            for ids in (None, subset, []):
                for limit in (None, 0, 7):
                    assert quick.due_ids(now, ids, limit) == orm.due_ids(now, ids, limit)
                assert quick.count_due(now, ids) == orm.count_due(now, ids)
                assert quick.learning_cards(ids) == orm.learning_cards(ids)
                for states in ((2,), (1, 3)):
                    got = quick.due_ids(now, ids, None, states)
                    assert got == orm.due_ids(now, ids, None, states)
                for graduated in (True, False):
                    since = now - timedelta(days=2)
                    assert quick.answer_counts(since, ids, graduated) == orm.answer_counts(
                        since, ids, graduated
                    )
            assert quick.not_new_ids(now) == orm.not_new_ids(now)
            start = now - timedelta(hours=rng.uniform(1, 48))
            assert quick.counts_since(start) == orm.counts_since(start)
            assert quick.review_counts_since(start) == orm.review_counts_since(start)
        day = timedelta(days=1)
        windows = [(T0 + d * day, T0 + (d + 1) * day) for d in range(-6, 6)]
        assert quick.studied_days(windows) == orm.studied_days(windows)
        assert any(orm.studied_days(windows)) and not all(orm.studied_days(windows))
        for qid in [*IDS, *EDGES, "missing"]:
            mine, theirs = quick.card(qid), orm.card(qid)
            if theirs is None:
                assert mine is None
                continue
            fields = mine.__slots__  # type: ignore[union-attr]
            assert {f: getattr(mine, f) for f in fields} == {f: getattr(theirs, f) for f in fields}
        mine_all, theirs_all = quick.all_cards(), orm.all_cards()
        assert mine_all.keys() == theirs_all.keys()
        for qid, record in mine_all.items():
            fields = record.__slots__
            assert {f: getattr(record, f) for f in fields} == {
                f: getattr(theirs_all[qid], f) for f in fields
            }
        asked = [*rng.sample(IDS, 40), "missing"]
        assert quick.recorded(asked) == orm.recorded(asked)
        assert quick.recorded([]) == orm.recorded([]) == set()


def test_quick_reads_apply_only_to_a_current_sqlite_file(tmp_path):
    missing = tmp_path / "none.db"
    assert QuickReader.open(f"sqlite:///{missing}") is None
    assert not missing.exists(), "looking must not create the file"
    assert QuickReader.open("sqlite://") is None
    assert QuickReader.open("sqlite:///:memory:") is None
    assert QuickReader.open("postgresql://user@localhost/quizzer") is None

    old = tmp_path / "old.db"
    migrate(make_engine(f"sqlite:///{old}"), "0001")
    assert QuickReader.open(f"sqlite:///{old}") is None  # needs a migration first

    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    assert QuickReader.open(f"sqlite:///{junk}") is None  # the normal open reports it

    current = tmp_path / "with space.db"
    open_database(f"sqlite:///{current}")
    assert QuickReader.open(f"sqlite:///{current}") is not None
    assert QuickReader.open(f"sqlite+pysqlite:///{current}") is not None


def test_quick_reads_never_write(tmp_path):
    url = f"sqlite:///{tmp_path / 'q.db'}"
    fill(url, 4)
    quick = QuickReader.open(url)
    assert quick is not None
    with pytest.raises(sqlite3.OperationalError, match=r"readonly"):
        quick._connection.execute("DELETE FROM cards")


def test_service_answers_the_same_before_and_after_the_database_opens(tmp_path, small_bank, clock):
    url = f"sqlite:///{tmp_path / 's.db'}"
    early = ReviewService(open_database(url), small_bank, clock=clock)
    first = early.queue()
    for qid, rating in zip(first[:4], (1, 3, 3, 4), strict=True):
        early.rate(qid, rating)
    clock.advance(timedelta(days=2))

    service = quick_service(url, small_bank, clock)
    sessions = service.sessions
    assert service.quick is not None
    before = (service.queue(), [service.card(q) for q in first], service.preview(first[1]))
    assert not sessions.is_open, "the first reads must not open the database"
    service.open()
    assert sessions.is_open and service.quick is None
    after = (service.queue(), [service.card(q) for q in first], service.preview(first[1]))
    assert before == after
    assert before[0][0] in first[:4], "a due review comes before new cards"


def test_writes_before_open_land_and_reads_see_them(tmp_path, small_bank, clock):
    url = f"sqlite:///{tmp_path / 's.db'}"
    open_database(url)
    service = quick_service(url, small_bank, clock)
    qid = service.queue()[0]
    service.rate(qid, 3)  # opens the database on demand
    assert service.card(qid).state != "new"  # read back through the quick reads
    with service.sessions() as s:
        assert s.scalar(select(func.count()).select_from(ReviewRow)) == 1


def test_study_paints_its_first_card_before_sqlalchemy_loads(tmp_path):
    """The real command, headless: first card without SQLAlchemy, then a rating is saved."""
    db = tmp_path / "study.db"
    open_database(f"sqlite:///{db}")
    assert entry(["--db", f"sqlite:///{db}", "config", "set", "companies", "none"]) == 0
    code = textwrap.dedent(
        f"""
        import sys
        import textual.app
        from quizzer.cli.main import entry
        from quizzer.tui.screens import study

        seen = []
        show = study.StudyScreen.show_current

        def record(self):
            seen.append("sqlalchemy" in sys.modules)
            show(self)

        study.StudyScreen.show_current = record

        async def pilot(p):
            await p.pause()
            await p.press("space", "3")
            await p.app.workers.wait_for_complete()
            p.app.exit()

        run = textual.app.App.run
        textual.app.App.run = lambda self, **kw: run(self, headless=True, auto_pilot=pilot)
        code = entry(["--db", "sqlite:///{db}", "study"])
        print("SQLALCHEMY_AT_FIRST_CARD", seen[0], "LOADED_AFTER", "sqlalchemy" in sys.modules)
        sys.exit(code)
        """
    )
    env = {**os.environ, "QUIZZER_HOME": str(tmp_path / "home"), "TERM": "xterm-256color"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "SQLALCHEMY_AT_FIRST_CARD False LOADED_AFTER True" in out.stdout, out.stdout
    with open_database(f"sqlite:///{db}")() as s:
        ratings = s.scalars(select(ReviewRow.rating)).all()
    assert ratings == [3]


def test_a_database_that_needs_migrating_still_opens_before_the_app(tmp_path):
    """An older schema takes the normal path: migrated first, setup skipped, then studied."""
    db = tmp_path / "old.db"
    migrate(make_engine(f"sqlite:///{db}"), "0001")
    assert QuickReader.open(f"sqlite:///{db}") is None
    code = textwrap.dedent(
        f"""
        import sys
        import textual.app
        from quizzer.cli.main import entry

        async def pilot(p):
            await p.pause()
            await p.press("escape")  # the first-run setup: skip it
            await p.pause()
            await p.press("space", "4")
            p.app.exit()

        run = textual.app.App.run
        textual.app.App.run = lambda self, **kw: run(self, headless=True, auto_pilot=pilot)
        sys.exit(entry(["--db", "sqlite:///{db}", "study"]))
        """
    )
    env = {**os.environ, "QUIZZER_HOME": str(tmp_path / "home"), "TERM": "xterm-256color"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert QuickReader.open(f"sqlite:///{db}") is not None  # now at the newest revision
    with open_database(f"sqlite:///{db}")() as s:
        assert s.scalars(select(ReviewRow.rating)).all() == [4]


def test_lazy_sessions_open_once_across_threads(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    sessions = LazySessions(f"sqlite:///{tmp_path / 'l.db'}")
    assert not sessions.is_open and not Path(tmp_path / "l.db").exists()
    with ThreadPoolExecutor(4) as pool:
        factories = list(pool.map(lambda _: sessions.factory(), range(8)))
    assert all(f is factories[0] for f in factories)
    with sessions.begin() as s:
        s.add(CardRow(question_id="x", due=T0, created_at=T0))
    with sessions() as s:
        assert s.get(CardRow, "x") is not None


def test_list_due_reads_without_sqlalchemy_and_matches_the_queue(tmp_path, clock):
    from quizzer.bank.loader import load_bank

    url = f"sqlite:///{tmp_path / 'l.db'}"
    bank = load_bank()
    service = ReviewService(open_database(url), bank, clock=clock)
    for qid in service.queue()[:5]:
        service.rate(qid, 1)  # due again within minutes: these lead the queue
    code = textwrap.dedent(
        f"""
        import json, sys
        from quizzer.cli.main import entry
        code = entry(["--db", "{url}", "list", "--due", "--json", "--limit", "8"])
        print("SQLALCHEMY", "sqlalchemy" in sys.modules)
        sys.exit(code)
        """
    )
    env = {**os.environ, "QUIZZER_HOME": str(tmp_path / "home")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    listed, _, flag = out.stdout.rpartition("SQLALCHEMY")
    assert flag.strip() == "False"
    expected = ReviewService(open_database(url), bank).queue()[:8]
    assert [item["id"] for item in json.loads(listed)] == expected


def test_on_postgresql_study_reads_through_the_orm_from_the_start(pg_url, clock):
    """The quick first-card path is for a local SQLite file only; any other URL opens the
    database before the first card, and the queue is the same."""
    from quizzer.cli.context import AppContext, Settings

    app = AppContext(Settings(db_url=pg_url))
    service = app.review_service(quick=True)
    assert service.quick is None and QuickReader.open(pg_url) is None
    service.clock = clock
    first = service.queue()[0]
    service.rate(first, Rating.GOOD)
    assert service.card(first).reps == 1
