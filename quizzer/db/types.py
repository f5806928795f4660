"""A datetime column that only ever holds UTC: aware in Python, naive UTC in the database."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.dialects.sqlite import DATETIME as SQLITE_DATETIME
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

from quizzer.db.utc import from_stored, to_naive_utc


class _SQLiteText(SQLITE_DATETIME):
    """SQLite's DATETIME, read back as the stored text: `from_stored` parses it, so a
    damaged value reads as missing instead of failing the whole query."""

    def result_processor(self, dialect: Dialect, coltype: object) -> None:
        return None


class UTCDateTime(TypeDecorator[datetime]):
    impl = DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(_SQLiteText())
        return dialect.type_descriptor(DateTime())

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        return None if value is None else to_naive_utc(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return from_stored(value)
