"""Open a database: checks before any write, an engine with SQLite pragmas, the schema at
head (see `quizzer.db.migrate`), and a session factory."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import sessionmaker

from quizzer.db.errors import missing_driver
from quizzer.db.migrate import MIGRATIONS, current_revision, ensure_schema, migrate
from quizzer.db.schema import HEAD
from quizzer.db.target import check_sqlite_file, sqlite_file

BUSY_TIMEOUT_MS = 5000
__all__ = ["HEAD", "MIGRATIONS", "current_revision", "make_engine", "migrate", "open_database"]


def make_engine(url: str, *, transactional_ddl: bool = False) -> Engine:
    """An engine for `url`. With `transactional_ddl`, an SQLite transaction is a real
    ``BEGIN IMMEDIATE`` that also covers schema changes (migrations use this)."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    kwargs: dict[str, Any] = {}
    if backend == "sqlite":
        kwargs["connect_args"] = {"timeout": BUSY_TIMEOUT_MS / 1000}
    try:
        engine = create_engine(parsed, **kwargs)
    except ModuleNotFoundError as exc:
        raise missing_driver(backend, exc.name or parsed.get_driver_name()) from None
    if backend == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
        if transactional_ddl:
            event.listen(engine, "connect", _driver_autocommit)
            event.listen(engine, "begin", _begin_immediate)
    return engine


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA journal_mode = WAL")
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.close()


def _driver_autocommit(dbapi_connection: Any, _record: Any) -> None:
    # The sqlite3 driver otherwise runs DDL outside any transaction; SQLAlchemy now
    # issues BEGIN itself (below), so a schema change commits whole or not at all.
    dbapi_connection.isolation_level = None


def _begin_immediate(connection: Any) -> None:
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def open_database(url: str, *, upgrade: bool = True) -> sessionmaker:
    """A session factory for `url`, its schema brought to head. An SQLite file that is not
    quizzer's (another application's, empty, or from a newer quizzer) is refused first."""
    path = sqlite_file(url)
    if path is not None:
        check_sqlite_file(path)
    engine = make_engine(url)
    if upgrade:
        ensure_schema(engine, url)
    return sessionmaker(engine, expire_on_commit=False)
