"""Shared fixtures: user dirs under tmp_path, a fixed clock, fuzz-free scheduling."""

from __future__ import annotations

import os
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fsrs import Scheduler

from quizzer.bank.loader import check_bank
from quizzer.bank.model import Bank
from quizzer.db.engine import open_database
from quizzer.review.clock import DayBoundary, FixedClock
from quizzer.review.service import ReviewService
from quizzer.review.settings import StudySettings

FIXTURES = Path(__file__).parent / "fixtures"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday morning, after the 4 am rollover


@pytest.fixture(autouse=True)
def _user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test touches the real user data dir, workspace or database."""
    monkeypatch.setenv("QUIZZER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("QUIZZER_DB", raising=False)


@pytest.fixture(scope="session")
def small_bank() -> Bank:
    bank, problems = check_bank([FIXTURES / "small"])
    assert problems == []
    return bank


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'test.db'}"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str | None]:
    """A PostgreSQL server URL: ``$QUIZZER_TEST_PG_URL``, or a server started here when
    the binaries are installed, or None."""
    given = os.environ.get("QUIZZER_TEST_PG_URL")
    if given:
        yield given
        return
    from tests import pg_server as server

    if server.find_binary("initdb") is None:
        yield None
        return
    # Not under pytest's private temp folder: the server's own user must reach it.
    folder = Path(tempfile.mkdtemp(prefix="quizzer-pg-"))
    try:
        url = server.start(folder)
    except (RuntimeError, OSError, subprocess.CalledProcessError):
        yield None
        return
    try:
        yield url
    finally:
        server.stop(folder)


def fresh_pg_database(server_url: str) -> str:
    """Create an empty database on the server and return its URL."""
    import psycopg
    from sqlalchemy.engine import make_url

    name = f"t_{uuid.uuid4().hex[:12]}"
    base = make_url(server_url)
    with psycopg.connect(base.set(drivername="postgresql").render_as_string(False)) as conn:
        conn.autocommit = True
        conn.execute(f'CREATE DATABASE "{name}"')
    return base.set(database=name).render_as_string(hide_password=False)


def need_pg(pg_server: str | None) -> str:
    """The server URL, or a skip (a failure where ``QUIZZER_TEST_REQUIRE_PG`` is set)."""
    if pg_server is None:
        reason = "no PostgreSQL server: set QUIZZER_TEST_PG_URL or install postgresql"
        if os.environ.get("QUIZZER_TEST_REQUIRE_PG"):
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        import psycopg  # noqa: F401
    except ModuleNotFoundError:
        pytest.skip("psycopg not installed: pip install 'quizzer[postgres]'")
    return pg_server


@pytest.fixture
def pg_url(pg_server: str | None) -> str:
    """A fresh, empty PostgreSQL database."""
    return fresh_pg_database(need_pg(pg_server))


@pytest.fixture(params=["sqlite", "postgresql"])
def any_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same test on an SQLite file and on a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'test.db'}"
    return fresh_pg_database(need_pg(request.getfixturevalue("pg_server")))


@pytest.fixture
def make_service(small_bank: Bank, clock: FixedClock, db_url: str):
    def make(bank: Bank | None = None, settings: StudySettings | None = None) -> ReviewService:
        return ReviewService(
            open_database(db_url),
            bank or small_bank,
            clock=clock,
            settings=settings or StudySettings(),
            fuzz=False,
            day=DayBoundary(tz=UTC, hour=4),
        )

    return make


def quick_service(url: str, bank: Bank, clock: FixedClock) -> ReviewService:
    """A service as `quizzer study` builds one: quick first reads, database opened on demand."""
    from quizzer.db.lazy import LazySessions
    from quizzer.db.quick import QuickReader

    return ReviewService(
        LazySessions(url),
        bank,
        clock=clock,
        scheduler=Scheduler(enable_fuzzing=False),
        quick=QuickReader.open(url),
    )


@pytest.fixture
def service(make_service) -> ReviewService:
    return make_service()


def days(n: float) -> timedelta:
    return timedelta(days=n)


_PG_OUTCOMES: dict[str, int] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count the outcomes of the tests that run on PostgreSQL."""
    fixtures = dict(report.user_properties).get("fixtures", ())
    on_pg = "postgresql" in report.nodeid or "pg_url" in fixtures
    if on_pg and (report.when == "call" or report.outcome == "skipped"):
        _PG_OUTCOMES[report.outcome] = _PG_OUTCOMES.get(report.outcome, 0) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.user_properties.append(("fixtures", tuple(getattr(item, "fixturenames", ()))))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say how many tests ran against a real PostgreSQL server."""
    if _PG_OUTCOMES:
        counts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(_PG_OUTCOMES.items()))
        terminalreporter.write_line(f"PostgreSQL-backed tests: {counts}")
