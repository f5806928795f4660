"""Read-only reads of an SQLite database with the standard library's driver.

`quizzer study` shows its first card through these while SQLAlchemy loads in the
background. They apply only to a local SQLite file whose schema is at the newest
revision; anything else (a new file, an older schema, another database) opens normally.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from urllib.parse import quote

from quizzer.db.schema import HEAD
from quizzer.db.target import sqlite_file
from quizzer.db.utc import from_stored, to_sqlite_text
from quizzer.review.reads import CardRecord

_CARD_COLUMNS = (
    "state, step, stability, difficulty, due, last_review, reps, lapses, suspended, "
    "buried_until, leech, created_at"
)
_AVAILABLE = "suspended = 0 AND (buried_until IS NULL OR buried_until <= :now)"


def connect_read_only(url: str, check_same_thread: bool = True) -> sqlite3.Connection | None:
    """A query-only sqlite3 connection to the existing SQLite file of `url`, or None (not
    SQLite, no file yet, or unreadable: the normal open then reports it)."""
    path = sqlite_file(url)
    if path is None or not path.is_file():
        return None
    uri = f"file:{quote(str(path.resolve()))}?mode=rw"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=5, check_same_thread=check_same_thread)
        connection.execute("PRAGMA query_only = ON")
    except sqlite3.Error:
        return None
    return connection


class QuickReader:
    """One read-only connection, shared by threads one query at a time."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self._lock = threading.Lock()

    @classmethod
    def open(cls, url: str) -> QuickReader | None:
        """A reader for `url`, or None where the normal open must run first."""
        connection = connect_read_only(url, check_same_thread=False)
        if connection is None:
            return None
        try:
            revision = connection.execute("SELECT version_num FROM alembic_version").fetchone()
        except sqlite3.Error:
            connection.close()
            return None  # let the normal open report it in its own words
        if revision is None or revision[0] != HEAD:
            connection.close()
            return None
        return cls(connection)

    @contextmanager
    def _cursor(self) -> Iterator[sqlite3.Cursor]:
        with self._lock:
            cursor = self._connection.cursor()
            try:
                yield cursor
            finally:
                cursor.close()

    def counts_since(self, start: datetime) -> tuple[int, int]:
        sql = (
            "SELECT state_before IS NULL, count(*) FROM reviews WHERE reviewed_at >= :start "
            "GROUP BY state_before IS NULL"
        )
        with self._cursor() as cursor:
            counts = dict(cursor.execute(sql, {"start": to_sqlite_text(start)}).fetchall())
        return counts.get(0, 0), counts.get(1, 0)

    def review_counts_since(self, start: datetime) -> dict[int | None, int]:
        sql = (
            "SELECT state_before, count(*) FROM reviews WHERE reviewed_at >= :start "
            "GROUP BY state_before"
        )
        with self._cursor() as cursor:
            return dict(cursor.execute(sql, {"start": to_sqlite_text(start)}).fetchall())

    def due_ids(
        self,
        now: datetime,
        ids: Collection[str] | None,
        limit: int | None,
        states: Collection[int] | None = None,
    ) -> list[str]:
        params: dict[str, object] = {"now": to_sqlite_text(now)}
        where = f"due <= :now AND last_review IS NOT NULL AND {_AVAILABLE}"
        if ids is not None:
            where += f" AND question_id IN ({_placeholders(ids, params)})"
        if states is not None:
            where += f" AND state IN ({', '.join(str(int(s)) for s in states) or 'NULL'})"
        sql = (
            f"SELECT question_id FROM cards WHERE {where} ORDER BY "
            "(julianday(:now) - julianday(last_review)) / coalesce(stability, 1e-06) DESC, "
            "question_id"
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        with self._cursor() as cursor:
            return [qid for (qid,) in cursor.execute(sql, params)]

    def learning_cards(self, ids: Collection[str] | None) -> list[tuple[str, datetime]]:
        params: dict[str, object] = {}
        where = (
            "state IN (1, 3) AND last_review IS NOT NULL AND suspended = 0 AND buried_until IS NULL"
        )
        if ids is not None:
            where += f" AND question_id IN ({_placeholders(ids, params)})"
        sql = f"SELECT question_id, due FROM cards WHERE {where} ORDER BY due, question_id"
        with self._cursor() as cursor:
            rows = cursor.execute(sql, params).fetchall()
        return [(qid, from_stored(due)) for qid, due in rows]  # type: ignore[misc]

    def settings(self, prefix: str) -> dict[str, str]:
        sql = "SELECT key, value FROM settings WHERE substr(key, 1, :n) = :prefix"
        with self._cursor() as cursor:
            rows = cursor.execute(sql, {"n": len(prefix), "prefix": prefix}).fetchall()
        return dict(rows)

    def not_new_ids(self, now: datetime) -> set[str]:
        sql = (
            "SELECT question_id FROM cards WHERE last_review IS NOT NULL OR suspended = 1 "
            "OR buried_until > :now"
        )
        with self._cursor() as cursor:
            return {qid for (qid,) in cursor.execute(sql, {"now": to_sqlite_text(now)})}

    def card(self, question_id: str) -> CardRecord | None:
        sql = f"SELECT {_CARD_COLUMNS} FROM cards WHERE question_id = ?"
        with self._cursor() as cursor:
            row = cursor.execute(sql, (question_id,)).fetchone()
        return None if row is None else _record(row)

    def all_cards(self) -> dict[str, CardRecord]:
        sql = f"SELECT question_id, {_CARD_COLUMNS} FROM cards"
        with self._cursor() as cursor:
            rows = cursor.execute(sql).fetchall()
        return {row[0]: _record(row[1:]) for row in rows}

    def count_due(self, now: datetime, ids: Collection[str] | None) -> int:
        params: dict[str, object] = {"now": to_sqlite_text(now)}
        where = f"due <= :now AND last_review IS NOT NULL AND {_AVAILABLE}"
        if ids is not None:
            where += f" AND question_id IN ({_placeholders(ids, params)})"
        with self._cursor() as cursor:
            return int(
                cursor.execute(f"SELECT count(*) FROM cards WHERE {where}", params).fetchone()[0]
            )

    def studied_days(self, windows: Sequence[tuple[datetime, datetime]]) -> list[bool]:
        if not windows:
            return []
        params: dict[str, object] = {}
        probes = []
        for n, (begin, end) in enumerate(windows):
            params[f"b{n}"], params[f"e{n}"] = to_sqlite_text(begin), to_sqlite_text(end)
            probes.append(
                f"EXISTS (SELECT 1 FROM reviews WHERE reviewed_at >= :b{n} AND reviewed_at < :e{n})"
            )
        with self._cursor() as cursor:
            row = cursor.execute("SELECT " + ", ".join(probes), params).fetchone()
        return [bool(v) for v in row]

    def answer_counts(
        self, since: datetime, ids: Collection[str] | None, graduated: bool
    ) -> tuple[int, int]:
        params: dict[str, object] = {"since": to_sqlite_text(since)}
        where = "reviewed_at >= :since"
        if graduated:
            where += " AND state_before = 2"
        if ids is not None:
            where += f" AND question_id IN ({_placeholders(ids, params)})"
        sql = f"SELECT count(*), coalesce(sum(rating > 1), 0) FROM reviews WHERE {where}"
        with self._cursor() as cursor:
            answers, kept = cursor.execute(sql, params).fetchone()
        return int(answers), int(kept)

    def recorded(self, ids: Collection[str]) -> set[str]:
        params: dict[str, object] = {}
        listed = _placeholders(ids, params)
        sql = (
            f"SELECT question_id FROM cards WHERE question_id IN ({listed}) "
            f"UNION SELECT question_id FROM reviews WHERE question_id IN ({listed})"
        )
        with self._cursor() as cursor:
            return {qid for (qid,) in cursor.execute(sql, params)}


def _placeholders(ids: Collection[str], params: dict[str, object]) -> str:
    names = []
    for n, qid in enumerate(ids):
        params[f"id{n}"] = qid
        names.append(f":id{n}")
    return ", ".join(names) or "NULL"


def _record(row: Sequence[object]) -> CardRecord:
    """A card row's columns (in _CARD_COLUMNS order) as a record."""
    state, step, stab, diff, due, last, reps, lapses, susp, buried, leech, created = row
    return CardRecord(
        state=state,
        step=step,
        stability=stab,
        difficulty=diff,
        due=from_stored(due),  # type: ignore[arg-type]
        last_review=from_stored(last),
        reps=reps,
        lapses=lapses,
        suspended=bool(susp),
        buried_until=from_stored(buried),
        leech=bool(leech),
        created_at=from_stored(created),  # type: ignore[arg-type]
    )
