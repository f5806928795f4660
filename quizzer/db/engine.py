"""Open a database: engine with SQLite pragmas, migrations to head, a session factory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import sessionmaker

from quizzer.db.schema import HEAD

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
BUSY_TIMEOUT_MS = 5000


def make_engine(url: str) -> Engine:
    parsed = make_url(url)
    kwargs: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        kwargs["connect_args"] = {"timeout": BUSY_TIMEOUT_MS / 1000}
    engine = create_engine(parsed, **kwargs)
    if parsed.get_backend_name() == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA journal_mode = WAL")
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.close()


def alembic_config(engine: Engine) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["engine"] = engine
    return config


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision`; an older database keeps its rows."""
    from alembic import command

    command.upgrade(alembic_config(engine), revision)


def current_revision(engine: Engine) -> str | None:
    from sqlalchemy import text
    from sqlalchemy.exc import OperationalError, ProgrammingError

    with engine.connect() as connection:
        try:
            return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
        except (OperationalError, ProgrammingError) as exc:
            if "alembic_version" not in str(exc):
                raise  # a corrupt or foreign file, not a missing table
            return None


def open_database(url: str, *, upgrade: bool = True) -> sessionmaker:
    engine = make_engine(url)
    if upgrade and current_revision(engine) != HEAD:
        migrate(engine)
    return sessionmaker(engine, expire_on_commit=False)
