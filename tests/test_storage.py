"""Migrations, the UTC column type, and crash safety of ratings."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import func, inspect, select, text

from quizzer.db.engine import HEAD, MIGRATIONS, make_engine, migrate, open_database
from quizzer.db.models import CardRow, ReviewRow


def test_head_constant_matches_migration_scripts():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_current_head() == HEAD


def test_first_revision_with_rows_upgrades_intact(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = make_engine(url)
    migrate(engine, "0001")
    assert "settings" not in inspect(engine).get_table_names()
    with engine.begin() as c:
        c.execute(
            text(
                "INSERT INTO cards (question_id, state, step, stability, difficulty, due, last_review,"
                " reps, lapses, suspended, created_at) VALUES ('q1', 2, NULL, 12.5, 4.2,"
                " '2026-01-10 08:00:00.000000', '2026-01-01 08:00:00.000000', 3, 1, 0,"
                " '2025-12-30 08:00:00.000000')"
            )
        )
        for i in range(3):
            c.execute(
                text(
                    "INSERT INTO reviews (question_id, rating, reviewed_at, state_before, state_after,"
                    f" due_after) VALUES ('q1', 3, '2026-01-0{i + 1} 08:00:00', 1, 2,"
                    " '2026-01-10 08:00:00')"
                )
            )
    sessions = open_database(url)
    with sessions() as s:
        row = s.get(CardRow, "q1")
        assert (row.stability, row.reps, row.lapses, row.leech, row.buried_until) == (
            12.5,
            3,
            1,
            False,
            None,
        )
        assert row.due == datetime(2026, 1, 10, 8, tzinfo=UTC)
        assert s.scalar(select(func.count()).select_from(ReviewRow)) == 3
    with engine.connect() as c:
        assert c.execute(text("SELECT version_num FROM alembic_version")).scalar() == HEAD


def test_sqlite_runs_in_wal_with_busy_timeout(tmp_path):
    sessions = open_database(f"sqlite:///{tmp_path / 'w.db'}")
    with sessions() as s:
        assert s.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert s.execute(text("PRAGMA busy_timeout")).scalar() >= 1000


def test_utc_column_round_trips_and_refuses_naive(any_db_url):
    sessions = open_database(any_db_url)
    local = datetime(2026, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=8)))
    with sessions.begin() as s:
        s.add(
            CardRow(
                question_id="a",
                state=1,
                due=local,
                reps=0,
                lapses=0,
                suspended=False,
                leech=False,
                created_at=local,
            )
        )
    with sessions() as s:
        due = s.get(CardRow, "a").due
    assert due == local and due.tzinfo == UTC and due.hour == 4
    with pytest.raises(Exception, match="naive"), sessions.begin() as s:
        s.add(
            CardRow(
                question_id="b",
                state=1,
                due=datetime(2026, 1, 1),
                reps=0,
                lapses=0,
                suspended=False,
                leech=False,
                created_at=local,
            )
        )


def test_nothing_created_at_import(tmp_path):
    home = tmp_path / "fresh-home"
    code = "import quizzer.cli.main, quizzer.review.service, quizzer.db.engine"
    env = {**os.environ, "QUIZZER_HOME": str(home)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert not home.exists()


def test_ratings_survive_sigkill(tmp_path):
    db = tmp_path / "kill.db"
    script = textwrap.dedent(f"""
        import os, signal, sys
        from fsrs import Scheduler
        from quizzer.bank.loader import load_bank
        from quizzer.db.engine import open_database
        from quizzer.review.model import Rating
        from quizzer.review.service import ReviewService
        service = ReviewService(open_database("sqlite:///{db}"), load_bank(),
                                scheduler=Scheduler(enable_fuzzing=False))
        for qid in service.queue()[:5]:
            service.rate(qid, Rating.GOOD)
            print("rated", qid, flush=True)
        print("done", flush=True)
        sys.stdin.readline()  # wait to be killed, with the engine and sessions still open
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    lines = []
    while (line := proc.stdout.readline()) and line.strip() != "done":
        lines.append(line)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert len(lines) == 5
    sessions = open_database(f"sqlite:///{db}")
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(ReviewRow)) == 5
        assert s.scalar(select(func.count()).select_from(CardRow)) == 5
