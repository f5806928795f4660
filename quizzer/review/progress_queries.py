"""`ProgressReads` through SQLAlchemy, on any database (SQLite, PostgreSQL).

Day and week windows are a VALUES table joined to the review log on `reviewed_at`, so
each window is one indexed range and the log is read in one grouped statement.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

from sqlalchemy import Integer, and_, case, column, func, select, values
from sqlalchemy.orm import Session

from quizzer.db.models import ReviewRow
from quizzer.db.types import UTCDateTime
from quizzer.review.progress_reads import LogEntry, WindowCounts


class OrmProgressReads:
    """`quizzer.review.progress_reads.ProgressReads` over one SQLAlchemy session."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def window_counts(
        self, windows: Sequence[tuple[datetime, datetime]], ids: Collection[str] | None
    ) -> list[WindowCounts]:
        if not windows:
            return []
        table = (
            values(
                column("i", Integer),
                column("b", UTCDateTime()),
                column("e", UTCDateTime()),
                name="w",
            )
            .data([(n, begin, end) for n, (begin, end) in enumerate(windows)])
            .cte("w")
        )
        graduated = ReviewRow.state_before == 2
        query = (
            select(
                table.c.i,
                func.count(),
                func.coalesce(func.sum(case((graduated, 1), else_=0)), 0),
                func.coalesce(
                    func.sum(case((and_(graduated, ReviewRow.rating > 1), 1), else_=0)), 0
                ),
            )
            .select_from(table)
            .join(
                ReviewRow,
                and_(ReviewRow.reviewed_at >= table.c.b, ReviewRow.reviewed_at < table.c.e),
            )
            .group_by(table.c.i)
        )
        if ids is not None:
            query = query.where(ReviewRow.question_id.in_(list(ids)))
        out = [WindowCounts(0, 0, 0)] * len(windows)
        for n, answers, grad, kept in self.session.execute(query):
            out[n] = WindowCounts(int(answers), int(grad), int(kept))
        return out

    def review_log(self, ids: Collection[str]) -> list[LogEntry]:
        if not ids:
            return []
        query = (
            select(
                ReviewRow.question_id,
                ReviewRow.reviewed_at,
                ReviewRow.state_after,
                ReviewRow.stability,
            )
            .where(ReviewRow.question_id.in_(list(ids)))
            .order_by(ReviewRow.question_id, ReviewRow.reviewed_at, ReviewRow.id)
        )
        return [
            LogEntry(qid, at, state, stability)
            for qid, at, state, stability in self.session.execute(query)
            if at is not None
        ]
