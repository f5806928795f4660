"""How a UTC instant is stored: naive UTC text in SQLite, aware UTC in Python (stdlib only)."""

from __future__ import annotations

from datetime import UTC, datetime

# The text SQLite holds for a DATETIME column; comparing two such strings compares instants.
SQLITE_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


def to_naive_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("naive datetime given to a UTC column; attach a timezone")
    return value.astimezone(UTC).replace(tzinfo=None)


def to_sqlite_text(value: datetime) -> str:
    return to_naive_utc(value).strftime(SQLITE_FORMAT)


def from_stored(value: datetime | str | None) -> datetime | None:
    """An aware UTC datetime from what the database holds; None for NULL or for a value
    that is not a time at all (a damaged row reads as incomplete, not as a crash)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
