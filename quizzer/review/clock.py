"""Time, injectable: the service never calls datetime.now() itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


@dataclass
class FixedClock:
    """A clock for tests and benchmarks: returns `now` until moved."""

    now: datetime

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now = self.now + delta


@dataclass(frozen=True)
class DayBoundary:
    """A study day starts at `hour` local time (4 am, like most flashcard apps)."""

    tz: tzinfo | None = None
    hour: int = 4

    def start_of_day(self, now: datetime) -> datetime:
        local = now.astimezone(self.tz) if self.tz else now.astimezone()
        start = local.replace(hour=self.hour, minute=0, second=0, microsecond=0)
        if local < start:
            start -= timedelta(days=1)
        return start.astimezone(UTC)

    def start_of_next_day(self, now: datetime) -> datetime:
        return self.start_of_day(now) + timedelta(days=1)
