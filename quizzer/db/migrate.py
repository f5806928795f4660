"""Bring a database's schema to head without ever leaving it half-changed.

- A new SQLite file is built beside its final path and linked into place, so no other
  process (or a crash) ever sees it half-made; racing first launches both succeed.
- An existing database migrates inside one transaction (SQLite ``BEGIN IMMEDIATE``,
  PostgreSQL with an advisory lock), so a crash rolls the whole step back.
- A file an older quizzer left half-migrated (a leftover ``_alembic_tmp_`` table, a step
  that stopped midway) is repaired first; the migration scripts are idempotent.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, inspect, text
from sqlalchemy.exc import OperationalError, ProgrammingError

from quizzer.db.schema import HEAD
from quizzer.db.target import TMP_PREFIX, check_revision, is_in_memory, sqlite_file

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_PG_LOCK_KEY = 0x717A6462  # any constant shared by every quizzer process


def current_revision(engine: Engine | Connection) -> str | None:
    """The schema revision stamped in the database; None for a database without one."""
    with _connected(engine) as connection:
        if not inspect(connection).has_table("alembic_version"):
            return None
        try:
            return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
        except (OperationalError, ProgrammingError) as exc:
            if "alembic_version" not in str(exc):
                raise
            return None


@contextlib.contextmanager
def _connected(bind: Engine | Connection) -> Any:
    if isinstance(bind, Connection):
        yield bind
    else:
        with bind.connect() as connection:
            yield connection


def ensure_schema(engine: Engine, url: str) -> None:
    """Migrate to head if needed; a database from a newer quizzer is refused."""
    path = sqlite_file(url)
    if path is not None and not path.exists():
        _create_aside(path)  # connecting first would create the file at its final path
        return
    revision = current_revision(engine)
    if revision == HEAD:
        return
    check_revision(revision)
    migrate(engine)


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision` in one transaction; an older database keeps its rows."""
    from alembic import command

    from quizzer.db.engine import make_engine

    separate = engine.dialect.name == "sqlite" and not is_in_memory(str(engine.url))
    locked = make_engine(str(engine.url), transactional_ddl=True) if separate else engine
    try:
        with locked.begin() as connection:
            if connection.dialect.name == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
            check_revision(current_revision(connection))
            if connection.dialect.name == "sqlite":
                repair_sqlite(connection)
            command.upgrade(_alembic_config(connection), revision)
            if revision == "head":
                _ensure_indexes(connection)
    finally:
        if separate:
            locked.dispose()


def _alembic_config(connection: Connection) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def repair_sqlite(connection: Connection) -> list[str]:
    """Finish what an interrupted table rebuild left behind; return what was done."""
    done = []
    names = set(inspect(connection).get_table_names())
    for tmp in sorted(n for n in names if n.startswith(TMP_PREFIX)):
        table = tmp.removeprefix(TMP_PREFIX)
        if table in names:  # stopped before the old table was dropped: it is still whole
            connection.exec_driver_sql(f'DROP TABLE "{tmp}"')
            done.append(f"dropped {tmp}")
        else:  # stopped after the drop: the copy holds every row
            connection.exec_driver_sql(f'ALTER TABLE "{tmp}" RENAME TO "{table}"')
            done.append(f"renamed {tmp} to {table}")
    return done


def _ensure_indexes(connection: Connection) -> None:
    from quizzer.db.models import Base

    for table in Base.metadata.sorted_tables:
        for index in table.indexes:
            index.create(connection, checkfirst=True)


def _create_aside(path: Path) -> None:
    """Build a new database next to `path` and link it into place; if another process
    got there first, keep theirs."""
    from quizzer.db.engine import make_engine

    _remove_stale_builds(path)
    building = path.with_name(f".{path.name}.new-{os.getpid()}")
    for leftover in _with_sidecars(building):
        leftover.unlink(missing_ok=True)
    engine = make_engine(f"sqlite:///{building}", transactional_ddl=True)
    try:
        with engine.begin() as connection:
            from alembic import command

            command.upgrade(_alembic_config(connection), "head")
            _ensure_indexes(connection)
    finally:
        engine.dispose()  # the last connection closes: the WAL is checkpointed away
    try:
        os.link(building, path)
    except FileExistsError:
        pass  # another first launch finished first; its database is complete too
    finally:
        for leftover in _with_sidecars(building):
            leftover.unlink(missing_ok=True)


def _with_sidecars(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def _remove_stale_builds(path: Path) -> None:
    for stale in path.parent.glob(f".{path.name}.new-*"):
        pid = stale.name.removesuffix("-wal").removesuffix("-shm").rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            stale.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
