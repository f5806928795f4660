"""Turn database failures the user can cause into one readable line."""

from __future__ import annotations


def describe_db_error(exc: BaseException) -> str | None:
    import sqlite3

    from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

    if isinstance(exc, sqlite3.Error):  # raised by the quick reads, which bypass SQLAlchemy
        return f"database error: {exc}"

    if isinstance(exc, NoSuchModuleError | ArgumentError):
        return f"bad database URL: {exc}"
    if isinstance(exc, DBAPIError):
        reason = str(exc.orig).strip() or type(exc.orig).__name__
        if "file is not a database" in reason or "malformed" in reason:
            return f"the database file is corrupt or not a quizzer database ({reason})"
        return f"database error: {reason}"
    if isinstance(exc, SQLAlchemyError):
        return f"database error: {exc}"
    return None
