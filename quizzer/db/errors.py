"""Turn database failures the user can cause into one readable line."""

from __future__ import annotations

from quizzer.errors import QuizzerError

# The extra (or package) that brings the driver of each database SQLAlchemy can reach.
DRIVER_HINTS = {
    "postgresql": "pip install 'quizzer[postgres]'",
    "mysql": "pip install pymysql and use a mysql+pymysql:// URL",
    "mariadb": "pip install pymysql and use a mysql+pymysql:// URL",
}


class DatabaseError(QuizzerError):
    """A database quizzer cannot or must not open, described in one line."""


def missing_driver(backend: str, module: str) -> DatabaseError:
    """The error for a URL whose driver module is not installed."""
    hint = DRIVER_HINTS.get(backend, f"install the Python package that provides '{module}'")
    return DatabaseError(f"the {backend} database driver ({module}) is not installed: {hint}")


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
        return f"database error: {reason.splitlines()[0]}"
    if isinstance(exc, SQLAlchemyError):
        return f"database error: {str(exc).splitlines()[0]}"
    return None
