"""The few queries that must stay fast on a large history (indexed, ordered in SQL).

`quizzer.db.quick` answers the same reads without SQLAlchemy; keep the two in step.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Float, Select, case, exists, func, literal, or_, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session
from sqlalchemy.sql.expression import ColumnElement, FunctionElement

from quizzer.db.models import CardRow, ReviewRow, SettingRow
from quizzer.db.types import UTCDateTime


class elapsed_days(FunctionElement[float]):
    """Days between a UTC timestamp column and a bound `now`, in the database's own terms."""

    type = Float()
    inherit_cache = True


@compiles(elapsed_days, "sqlite")
def _elapsed_sqlite(element: elapsed_days, compiler: Any, **kw: Any) -> str:
    column, now = element.clauses
    return (
        f"(julianday({compiler.process(now, **kw)}) - julianday({compiler.process(column, **kw)}))"
    )


@compiles(elapsed_days)
def _elapsed_default(element: elapsed_days, compiler: Any, **kw: Any) -> str:
    column, now = element.clauses
    return (
        f"(EXTRACT(EPOCH FROM ({compiler.process(now, **kw)} - "
        f"{compiler.process(column, **kw)})) / 86400.0)"
    )


def available(now: datetime) -> list[ColumnElement[bool]]:
    """Conditions for a card that may be shown at `now`: not suspended, not buried."""
    return [
        CardRow.suspended.is_(False),
        or_(CardRow.buried_until.is_(None), CardRow.buried_until <= now),
    ]


def due_query(
    now: datetime,
    ids: Collection[str] | None,
    limit: int | None,
    states: Collection[int] | None = None,
) -> Select:
    """Started cards due by `now`, lowest retrievability first.

    Retrievability falls monotonically with elapsed time over stability for every card
    under one scheduler, so ordering by that ratio in SQL gives the FSRS order exactly.
    """
    ratio = elapsed_days(CardRow.last_review, literal(now, UTCDateTime()))
    query = (
        select(CardRow.question_id)
        .where(CardRow.due <= now, CardRow.last_review.is_not(None), *available(now))
        .order_by((ratio / func.coalesce(CardRow.stability, 1e-6)).desc(), CardRow.question_id)
    )
    if ids is not None:
        query = query.where(CardRow.question_id.in_(ids))
    if states is not None:
        query = query.where(CardRow.state.in_(list(states)))
    if limit is not None:
        query = query.limit(limit)
    return query


class OrmReads:
    """`quizzer.review.reads.CardReads` over one SQLAlchemy session (any database)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def counts_since(self, start: datetime) -> tuple[int, int]:
        rows = self.session.execute(
            select(ReviewRow.state_before.is_(None), func.count())
            .where(ReviewRow.reviewed_at >= start)
            .group_by(ReviewRow.state_before.is_(None))
        ).all()
        counts = {bool(is_new): int(n) for is_new, n in rows}
        return counts.get(False, 0), counts.get(True, 0)

    def review_counts_since(self, start: datetime) -> dict[int | None, int]:
        rows = self.session.execute(
            select(ReviewRow.state_before, func.count())
            .where(ReviewRow.reviewed_at >= start)
            .group_by(ReviewRow.state_before)
        ).all()
        return {state: int(n) for state, n in rows}

    def due_ids(
        self,
        now: datetime,
        ids: Collection[str] | None,
        limit: int | None,
        states: Collection[int] | None = None,
    ) -> list[str]:
        return list(self.session.scalars(due_query(now, ids, limit, states)))

    def learning_cards(self, ids: Collection[str] | None) -> list[tuple[str, datetime]]:
        query = (
            select(CardRow.question_id, CardRow.due)
            .where(
                CardRow.state.in_([1, 3]),
                CardRow.last_review.is_not(None),
                CardRow.suspended.is_(False),
                CardRow.buried_until.is_(None),
            )
            .order_by(CardRow.due, CardRow.question_id)
        )
        if ids is not None:
            query = query.where(CardRow.question_id.in_(ids))
        return [(qid, due) for qid, due in self.session.execute(query)]

    def all_cards(self) -> dict[str, CardRow]:
        return {row.question_id: row for row in self.session.scalars(select(CardRow))}

    def studied_days(self, windows: Sequence[tuple[datetime, datetime]]) -> list[bool]:
        if not windows:
            return []
        probes = [
            exists().where(ReviewRow.reviewed_at >= begin, ReviewRow.reviewed_at < end)
            for begin, end in windows
        ]
        return [bool(v) for v in self.session.execute(select(*probes)).one()]

    def answer_counts(
        self, since: datetime, ids: Collection[str] | None, graduated: bool
    ) -> tuple[int, int]:
        recalled = func.coalesce(func.sum(case((ReviewRow.rating > 1, 1), else_=0)), 0)
        query = select(func.count(), recalled).where(ReviewRow.reviewed_at >= since)
        if graduated:
            query = query.where(ReviewRow.state_before == 2)
        if ids is not None:
            query = query.where(ReviewRow.question_id.in_(ids))
        answers, kept = self.session.execute(query).one()
        return int(answers), int(kept)

    def settings(self, prefix: str) -> dict[str, str]:
        query = select(SettingRow.key, SettingRow.value).where(SettingRow.key.startswith(prefix))
        return {key: value for key, value in self.session.execute(query)}

    def count_due(self, now: datetime, ids: Collection[str] | None) -> int:
        query = (
            select(func.count())
            .select_from(CardRow)
            .where(CardRow.due <= now, CardRow.last_review.is_not(None), *available(now))
        )
        if ids is not None:
            query = query.where(CardRow.question_id.in_(ids))
        return int(self.session.scalar(query) or 0)

    def not_new_ids(self, now: datetime) -> set[str]:
        query = select(CardRow.question_id).where(
            or_(
                CardRow.last_review.is_not(None),
                CardRow.suspended.is_(True),
                CardRow.buried_until > now,
            )
        )
        return set(self.session.scalars(query))

    def card(self, question_id: str) -> CardRow | None:
        return self.session.get(CardRow, question_id)

    def recorded(self, ids: Collection[str]) -> set[str]:
        cards = select(CardRow.question_id).where(CardRow.question_id.in_(ids))
        reviews = select(ReviewRow.question_id).where(ReviewRow.question_id.in_(ids))
        return set(self.session.scalars(cards.union(reviews)))
