"""What a database URL points at, checked before anything opens or writes it (stdlib only).

A plain path is an SQLite file. An SQLite file must be quizzer's own (or new): an empty
file, another application's database or one written by a newer quizzer is refused with
one line before a byte of it changes.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from urllib.parse import quote

from quizzer.db.errors import DatabaseError
from quizzer.db.schema import HEAD, REVISIONS, TABLES

SQLITE_SCHEMES = ("sqlite:///", "sqlite+pysqlite:///")
TMP_PREFIX = "_alembic_tmp_"


def resolve_url(text: str) -> str:
    """The SQLAlchemy URL for what the user typed: a plain path becomes an SQLite file."""
    if "://" in text:
        return text
    return f"sqlite:///{Path(text).expanduser().resolve()}"


def sqlite_file(url: str) -> Path | None:
    """The file of a plain `sqlite:///path` URL; None for memory, URI or query forms."""
    scheme = next((s for s in SQLITE_SCHEMES if url.startswith(s)), None)
    if scheme is None:
        return None
    database = url.removeprefix(scheme)
    if not database or database == ":memory:" or "?" in database or database.startswith("file:"):
        return None
    return Path(database).expanduser()


def is_in_memory(url: str) -> bool:
    """True for an SQLite URL whose database lives only as long as the process."""
    if not url.startswith(("sqlite:", "sqlite+pysqlite:")):
        return False
    database = url.split("://", 1)[-1].removeprefix("/")
    return database in ("", ":memory:") or "mode=memory" in database


def check_sqlite_file(path: Path) -> str | None:
    """Refuse a file quizzer must not touch; return its schema revision (None: new)."""
    if not path.parent.is_dir():
        raise DatabaseError(
            f"the folder {path.parent} does not exist; create it or choose another --db path"
        )
    if not path.exists():
        return None
    if path.is_dir():
        raise DatabaseError(f"{path} is a folder, not a database file")
    if path.stat().st_size == 0:
        raise DatabaseError(
            f"{path} is an empty file, not a quizzer database; delete it to start a new one"
        )
    tables, revision = _read_tables(path)
    foreign = sorted(t for t in tables if t not in TABLES and not t.startswith(TMP_PREFIX))
    if foreign:
        shown = ", ".join(foreign[:4]) + (", ..." if len(foreign) > 4 else "")
        raise DatabaseError(
            f"{path} is not a quizzer database (it holds tables {shown}); "
            "quizzer leaves it unchanged"
        )
    check_revision(revision)
    return revision


def check_revision(revision: str | None) -> None:
    """A revision this version cannot read is a newer quizzer's database."""
    if revision is not None and revision not in REVISIONS:
        raise DatabaseError(
            f"this database was written by a newer quizzer (schema revision {revision}; "
            f"this version knows up to {HEAD}): upgrade quizzer to open it"
        )


def _read_tables(path: Path) -> tuple[set[str], str | None]:
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=5)
    except sqlite3.Error as exc:
        raise DatabaseError(f"cannot open {path}: {exc}") from None
    try:
        rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = {name for (name,) in rows}
        revision = None
        if "alembic_version" in tables:
            found = connection.execute("SELECT version_num FROM alembic_version").fetchone()
            revision = found[0] if found else None
        return tables, revision
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"{path} is corrupt or not a quizzer database ({exc})") from None
    finally:
        connection.close()


def shown_url(url: str) -> str:
    """The database URL with any password hidden."""
    return re.sub(r"^([a-z0-9+]+://[^:/@]*):.*@", r"\1:***@", url)
