"""Read-only reads of an SQLite database with the standard library's driver.

`quizzer study` shows its first card through these while SQLAlchemy loads in the
background. They apply only to a local SQLite file whose schema is at the newest
revision; anything else (a new file, an older schema, another database) opens normally.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Collection, Iterator
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


class QuickReader:
    """One read-only connection, shared by threads one query at a time."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self._lock = threading.Lock()

    @classmethod
    def open(cls, url: str) -> QuickReader | None:
        """A reader for `url`, or None where the normal open must run first."""
        path = sqlite_file(url)
        if path is None or not path.is_file():
            return None
        uri = f"file:{quote(str(path.resolve()))}?mode=rw"
        try:
            connection = sqlite3.connect(uri, uri=True, timeout=5, check_same_thread=False)
            connection.execute("PRAGMA query_only = ON")
            revision = connection.execute("SELECT version_num FROM alembic_version").fetchone()
        except sqlite3.Error:
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
        if row is None:
            return None
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
