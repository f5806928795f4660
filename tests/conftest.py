"""Shared fixtures: user dirs under tmp_path, a fixed clock, fuzz-free scheduling."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fsrs import Scheduler

from quizzer.bank.loader import check_bank
from quizzer.bank.model import Bank
from quizzer.db.engine import open_database
from quizzer.review.clock import DayBoundary, FixedClock
from quizzer.review.model import Limits
from quizzer.review.service import ReviewService

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


@pytest.fixture
def make_service(small_bank: Bank, clock: FixedClock, db_url: str):
    def make(bank: Bank | None = None, limits: Limits | None = None) -> ReviewService:
        return ReviewService(
            open_database(db_url),
            bank or small_bank,
            clock=clock,
            limits=limits,
            scheduler=Scheduler(enable_fuzzing=False),
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
