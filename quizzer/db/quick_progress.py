"""`ProgressReads` on an SQLite file with the standard library's driver (no SQLAlchemy).

Used where the service reads quickly (`quizzer stats` on an SQLite file whose schema is
current); the SQL matches `quizzer.review.progress_queries` and a test holds the two to
the same answers.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from datetime import datetime

from quizzer.db.quick import connect_read_only
from quizzer.db.utc import from_stored, to_sqlite_text
from quizzer.review.progress_reads import LogEntry, WindowCounts


class QuickProgressReads:
    """One read-only sqlite3 connection to the file the service reads quickly."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    @classmethod
    def open(cls, url: str) -> QuickProgressReads | None:
        """A reader for the SQLite file of `url`, or None where it cannot be read so."""
        connection = connect_read_only(url)
        return cls(connection) if connection is not None else None

    def close(self) -> None:
        """Close the connection."""
        self._connection.close()

    def window_counts(
        self, windows: Sequence[tuple[datetime, datetime]], ids: Collection[str] | None
    ) -> list[WindowCounts]:
        if not windows:
            return []
        rows = ", ".join("(?, ?, ?)" for _ in windows)
        params: list[object] = []
        for n, (begin, end) in enumerate(windows):
            params += [n, to_sqlite_text(begin), to_sqlite_text(end)]
        where = ""
        if ids is not None:
            where = f"WHERE r.question_id IN ({', '.join('?' for _ in ids) or 'NULL'})"
            params += list(ids)
        sql = (
            f"WITH w(i, b, e) AS (VALUES {rows}) "
            "SELECT w.i, count(*), coalesce(sum(r.state_before = 2), 0), "
            "coalesce(sum(r.state_before = 2 AND r.rating > 1), 0) "
            f"FROM w JOIN reviews AS r ON r.reviewed_at >= w.b AND r.reviewed_at < w.e {where} "
            "GROUP BY w.i"
        )
        out = [WindowCounts(0, 0, 0)] * len(windows)
        for n, answers, graduated, kept in self._connection.execute(sql, params):
            out[n] = WindowCounts(int(answers), int(graduated), int(kept))
        return out

    def review_log(self, ids: Collection[str]) -> list[LogEntry]:
        if not ids:
            return []
        sql = (
            "SELECT question_id, reviewed_at, state_after, stability FROM reviews "
            f"WHERE question_id IN ({', '.join('?' for _ in ids)}) "
            "ORDER BY question_id, reviewed_at, id"
        )
        out = []
        for qid, at, state, stability in self._connection.execute(sql, list(ids)):
            when = from_stored(at)
            if when is not None:
                out.append(LogEntry(qid, when, state, stability))
        return out
