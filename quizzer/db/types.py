"""A datetime column that only ever holds UTC: aware in Python, naive UTC in the database."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from quizzer.db.utc import from_stored, to_naive_utc


class UTCDateTime(TypeDecorator[datetime]):
    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        return None if value is None else to_naive_utc(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return from_stored(value)
