"""Migrations never leave a database that the next command refuses.

A kill -9 at every statement of creating a database, of upgrading one with rows, and of an
older quizzer's non-transactional upgrade; first launches racing on one file; upgrades on
PostgreSQL from every earlier revision with the rows intact.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, event, func, select, text

from quizzer.db.engine import HEAD, make_engine, migrate, open_database
from quizzer.db.migrate import _alembic_config, current_revision
from quizzer.db.models import CardRow, ReviewRow
from quizzer.db.schema import REVISIONS

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _old_rows(url: str) -> None:
    """A database at revision 0001 holding one card and three reviews."""
    engine = make_engine(url)
    migrate(engine, "0001")
    with engine.begin() as c:
        c.execute(
            text(
                "INSERT INTO cards (question_id, state, step, stability, difficulty, due,"
                " last_review, reps, lapses, suspended, created_at) VALUES ('q1', 2, NULL,"
                " 12.5, 4.2, :due, :last, 3, 1, :no, :made)"
            ),
            {
                "due": datetime(2026, 1, 10, 8),
                "last": datetime(2026, 1, 1, 8),
                "no": False,
                "made": datetime(2025, 12, 30, 8),
            },
        )
        for day in (1, 2, 3):
            c.execute(
                text(
                    "INSERT INTO reviews (question_id, rating, reviewed_at, state_before,"
                    " state_after, due_after) VALUES ('q1', 3, :at, 1, 2, :due)"
                ),
                {"at": datetime(2026, 1, day, 8), "due": datetime(2026, 1, 10, 8)},
            )
    engine.dispose()


def _assert_intact(url: str, *, with_rows: bool) -> None:
    sessions = open_database(url)
    with sessions() as s:
        assert current_revision(s.connection()) == HEAD
        reviews = s.scalar(select(func.count()).select_from(ReviewRow))
        row = s.get(CardRow, "q1")
        if with_rows:
            assert reviews == 3
            assert (row.stability, row.reps, row.lapses, row.leech) == (12.5, 3, 1, False)
            assert row.due == datetime(2026, 1, 10, 8, tzinfo=UTC)
        else:
            assert reviews == 0 and row is None
        # the schema is whole: every column of head is there and writable
        s.execute(text("UPDATE cards SET buried_until = NULL, leech = :f"), {"f": False})
    sessions.kw["bind"].dispose()


def _killed_at(step: int, work) -> bool:
    """Run `work` in a forked child that SIGKILLs itself at its `step`-th SQL statement;
    True if it was killed (False: it finished in fewer statements)."""
    pid = os.fork()
    if pid == 0:  # child
        count = [0]

        def trace(_statement: str) -> None:
            count[0] += 1
            if count[0] == step:
                os.kill(os.getpid(), signal.SIGKILL)

        def hook(dbapi_connection, _record) -> None:
            dbapi_connection.set_trace_callback(trace)

        event.listen(Engine, "connect", hook)
        try:
            work()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status)


def _every_step(tmp_path, prepare, work, *, with_rows: bool) -> int:
    steps = 0
    for step in range(1, 400):
        db = tmp_path / f"s{step}" / "q.db"
        db.parent.mkdir()
        url = f"sqlite:///{db}"
        prepare(url)
        if not _killed_at(step, lambda url=url: work(url)):
            break
        steps += 1
        _assert_intact(url, with_rows=with_rows)  # the next command opens it
        shutil.rmtree(db.parent)
    return steps


def test_kill_at_every_step_of_creating_a_database(tmp_path):
    steps = _every_step(tmp_path, lambda url: None, open_database, with_rows=False)
    assert steps > 10


def test_kill_at_every_step_of_an_upgrade_keeps_the_rows(tmp_path):
    steps = _every_step(tmp_path, _old_rows, open_database, with_rows=True)
    assert steps > 10


def _old_style_upgrade(url: str) -> None:
    """How an older quizzer upgraded: the driver committed each DDL statement alone."""
    from alembic import command

    with make_engine(url).begin() as connection:
        command.upgrade(_alembic_config(connection), "head")


def test_a_half_migrated_file_from_an_older_quizzer_is_repaired(tmp_path):
    steps = _every_step(tmp_path, _old_rows, _old_style_upgrade, with_rows=True)
    assert steps > 10


def test_leftover_rebuild_table_is_finished(tmp_path):
    url = f"sqlite:///{tmp_path / 'q.db'}"
    _old_rows(url)
    engine = make_engine(url)
    with engine.begin() as c:  # stopped after the old table was dropped
        c.exec_driver_sql("ALTER TABLE cards RENAME TO _alembic_tmp_cards")
    engine.dispose()
    _assert_intact(url, with_rows=True)


RACER = textwrap.dedent(
    """
    import sys
    from quizzer.db.engine import open_database
    from quizzer.db.models import SettingRow
    sessions = open_database(sys.argv[1])
    with sessions.begin() as s:
        s.add(SettingRow(key=f"racer-{sys.argv[2]}", value="1"))
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_first_launches_racing_on_one_database_all_succeed(tmp_path, backend, request):
    url = (
        f"sqlite:///{tmp_path / 'race.db'}"
        if backend == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    script = tmp_path / "racer.py"
    script.write_text(RACER)
    for attempt in range(2):
        if backend == "sqlite":
            for leftover in tmp_path.glob("race.db*"):
                leftover.unlink()
        procs = [
            subprocess.Popen(
                [sys.executable, str(script), url, f"{attempt}-{i}"],
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(6)
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err[-1500:]
    with open_database(url)() as s:
        assert s.scalar(text("SELECT count(*) FROM settings WHERE key LIKE 'racer-1-%'")) == 6


@pytest.mark.parametrize("start", [None, *REVISIONS[:-1]])
def test_every_earlier_revision_upgrades_with_history(any_db_url, start):
    if start is None:
        open_database(any_db_url)
        _assert_intact(any_db_url, with_rows=False)
        return
    _old_rows(any_db_url)
    _assert_intact(any_db_url, with_rows=True)
