"""The review service: the only way screens and commands read or change the schedule.

One database session per unit of work; every rating is committed before it returns, so
a killed process loses nothing already rated.

The reads behind a study queue (`queue`, `card`, `preview`) go through a `CardReads`.
Until `open` has run they may use quick reads that need no SQLAlchemy, which is how
`quizzer study` paints its first card while the database opens in the background.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, TypeVar

from quizzer.bank.model import Bank, Filters, Question
from quizzer.errors import CorruptCardError, UnknownIdError
from quizzer.review.clock import Clock, DayBoundary, system_clock
from quizzer.review.fuzz import seed_for, seeded
from quizzer.review.model import (
    STATE_NAMES,
    CardInfo,
    DayCounts,
    HistoryEntry,
    Limits,
    Rating,
    RatingOutcome,
)
from quizzer.review.undo import ActionKind, UndoRecord, UndoResult, lock_card, snapshot_of

if TYPE_CHECKING:
    from fsrs import Scheduler
    from sqlalchemy.orm import Session, sessionmaker

    from quizzer.db.lazy import LazySessions
    from quizzer.db.models import CardRow
    from quizzer.review.reads import CardReads

T = TypeVar("T")

# SQLAlchemy, fsrs and the ORM models are imported where they are first used, so that
# importing this module (the study screen does) costs nothing before a query runs.


class ReviewService:
    def __init__(
        self,
        sessions: sessionmaker[Session] | LazySessions,
        bank: Bank,
        *,
        clock: Clock = system_clock,
        limits: Limits | None = None,
        scheduler: Scheduler | None = None,
        day: DayBoundary | None = None,
        quick: CardReads | None = None,
    ) -> None:
        self.sessions = sessions
        self.bank = bank
        self.clock = clock
        self.limits = limits or Limits()
        if scheduler is None:
            from fsrs import Scheduler

            scheduler = Scheduler(desired_retention=self.limits.desired_retention)
        self.scheduler = scheduler
        self.day = day or DayBoundary()
        self.quick = quick
        self._undo: list[UndoRecord] = []  # this caller's actions, newest last
        self.damaged: dict[str, str] = {}  # question id -> why its stored row is unusable

    def open(self) -> None:
        """Open the database (SQLAlchemy, migrations) now; reads use it from then on."""
        with self.sessions() as session:
            session.connection()
        self.quick = None

    @contextmanager
    def _reads(self) -> Iterator[CardReads]:
        quick = self.quick
        if quick is not None:
            yield quick
            return
        from quizzer.review.queries import OrmReads

        with self.sessions() as session:
            yield OrmReads(session)

    # -- reading -------------------------------------------------------------------------

    def _question(self, question_id: str) -> Question:
        question = self.bank.get(question_id)
        if question is None:
            raise UnknownIdError(f"unknown question '{question_id}'")
        return question

    def _ids(self, filters: Filters) -> list[str] | None:
        if filters.empty:
            return None
        return [q.id for q in self.bank.select(filters)]

    def queue(self, filters: Filters = Filters(), *, cram: bool = False) -> list[str]:  # noqa: B008
        """Question ids to study now: due reviews (lowest retrievability first), then new.

        Daily limits apply unless cramming; cram offers every selected card, schedule aside.
        """
        now = self.clock()
        ids = self._ids(filters)
        selected = ids if ids is not None else list(self.bank.questions)
        with self._reads() as reads:
            if cram:
                started = reads.due_ids(now + timedelta(days=36500), ids, None)
                fresh = [i for i in selected if i not in set(started)]
                return self._known(started) + self._rank_new(fresh, filters)
            done_reviews, done_new = reads.counts_since(self.day.start_of_day(now))
            review_room = max(0, self.limits.reviews_per_day - done_reviews)
            due = reads.due_ids(now, ids, review_room)
            blocked = reads.not_new_ids(now)
        new_room = max(0, self.limits.new_per_day - done_new)
        fresh = [i for i in selected if i not in blocked]
        return self._known(due) + self._rank_new(fresh, filters)[:new_room]

    def _known(self, ids: Sequence[str]) -> list[str]:
        return [i for i in ids if i in self.bank.questions]  # removed questions stay hidden

    def _rank_new(self, ids: Sequence[str], filters: Filters) -> list[str]:
        ranked = self.bank.rank_new([self.bank.questions[i] for i in ids], filters.companies)
        return [q.id for q in ranked]

    def card(self, question_id: str) -> CardInfo:
        from quizzer.db import converters

        question = self._question(question_id)
        with self._reads() as reads:
            row = reads.card(question.id)
            return converters.card_info(question, row, self.scheduler, self.clock())

    def cards(self) -> dict[str, CardInfo]:
        """Every bank question's card, new ones included (for browsing and stats).

        A card whose stored row is damaged is left out and named in `damaged`."""
        from sqlalchemy import select

        from quizzer.db import converters
        from quizzer.db.models import CardRow

        now = self.clock()
        with self.sessions() as session:
            rows = {r.question_id: r for r in session.scalars(select(CardRow))}
        out = {}
        for qid, question in self.bank.questions.items():
            try:
                out[qid] = converters.card_info(question, rows.get(qid), self.scheduler, now)
            except CorruptCardError as exc:
                self.damaged[qid] = exc.reason  # left out; the rest keeps working
        return out

    def preview(self, question_id: str) -> dict[Rating, timedelta]:
        """The interval each rating would give now, exactly as `rate` would apply it."""
        from fsrs import Rating as FsrsRating

        from quizzer.db import converters

        question = self._question(question_id)
        now = self.clock()
        with self._reads() as reads:
            card = converters.to_fsrs(reads.card(question.id), now, question.id)
        out = {}
        for rating in Rating:
            with seeded(seed_for(question.id, int(rating), card.last_review, card.step)):
                after, _ = self.scheduler.review_card(card, FsrsRating(int(rating)), now)
            out[rating] = after.due - now
        return out

    def day_counts(self, filters: Filters = Filters()) -> DayCounts:  # noqa: B008
        from quizzer.review.queries import OrmReads

        now = self.clock()
        ids = self._ids(filters)
        with self.sessions() as session:
            reads = OrmReads(session)
            done_reviews, done_new = reads.counts_since(self.day.start_of_day(now))
            due = reads.count_due(now, ids)
            blocked = reads.not_new_ids(now)
        selected = ids if ids is not None else list(self.bank.questions)
        new = sum(1 for i in selected if i not in blocked)
        return DayCounts(done_reviews, done_new, due, new)

    def history(self, question_id: str) -> list[HistoryEntry]:
        from sqlalchemy import select

        from quizzer.db.models import ReviewRow

        question = self._question(question_id)
        ids = [question.id, *question.aliases]
        with self.sessions() as session:
            rows = session.scalars(
                select(ReviewRow)
                .where(ReviewRow.question_id.in_(ids))
                .order_by(ReviewRow.reviewed_at, ReviewRow.id)
            ).all()
        return [
            HistoryEntry(
                reviewed_at=r.reviewed_at,
                rating=Rating(r.rating),
                state_before=STATE_NAMES[r.state_before],
                state_after=STATE_NAMES[r.state_after],
                interval=r.due_after - r.reviewed_at,
                duration_ms=r.duration_ms,
            )
            for r in rows
        ]

    # -- changing ------------------------------------------------------------------------

    def rate(
        self,
        question_id: str,
        rating: Rating,
        *,
        duration_ms: int | None = None,
        cram: bool = False,
    ) -> RatingOutcome:
        """Apply a rating and commit it. In cram mode nothing is written."""
        question = self._question(question_id)
        now = self.clock()
        outcome, record = self._transact(
            lambda session: self._rate_in(session, question.id, rating, now, duration_ms, cram)
        )
        self._undo.append(record)  # only once committed
        return outcome

    def _rate_in(
        self,
        session: Session,
        qid: str,
        rating: Rating,
        now: datetime,
        duration_ms: int | None,
        cram: bool,
    ) -> tuple[RatingOutcome, UndoRecord]:
        from fsrs import Rating as FsrsRating
        from fsrs import State

        from quizzer.db import converters
        from quizzer.db.models import CardRow, ReviewRow

        if not cram:
            lock_card(session, qid)
        row = session.get(CardRow, qid)
        before = converters.to_fsrs(row, now, qid)
        with seeded(seed_for(qid, int(rating), before.last_review, before.step)):
            after, _ = self.scheduler.review_card(before, FsrsRating(int(rating)), now, duration_ms)
        outcome = RatingOutcome(
            qid,
            rating,
            STATE_NAMES[int(after.state)],
            after.due,
            after.due - now,
            became_leech=False,
            cram=cram,
        )
        if cram:
            return outcome, UndoRecord("rate", qid, None, None, cram=True)
        started = row is not None and row.last_review is not None
        snapshot = converters.snapshot(row) if row is not None else None
        if row is None:
            row = converters.new_row(qid, now)
            session.add(row)
        lapsed = rating == Rating.AGAIN and before.state == State.Review and started
        converters.apply_fsrs(row, after)
        row.reps += 1
        row.lapses += int(lapsed)
        became_leech = lapsed and not row.leech and row.lapses >= self.limits.leech_lapses
        row.leech = row.leech or became_leech
        review = ReviewRow(
            question_id=qid,
            rating=int(rating),
            reviewed_at=now,
            duration_ms=duration_ms,
            state_before=int(before.state) if started else None,
            state_after=int(after.state),
            stability=after.stability,
            difficulty=after.difficulty,
            due_after=after.due,
            card_before=snapshot,
        )
        session.add(review)
        record = UndoRecord("rate", qid, snapshot, snapshot_of(session, qid), review.id)
        return replace(outcome, became_leech=became_leech), record

    def _transact(self, work: Callable[[Session], T]) -> T:
        """Run `work` in one write transaction; retried when a concurrent writer created
        the same card first (PostgreSQL cannot lock a row that does not exist yet)."""
        from sqlalchemy.exc import IntegrityError

        for attempt in range(3):
            try:
                with self.sessions.begin() as session:
                    return work(session)
            except IntegrityError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def undo(self) -> UndoResult | None:
        """Take back this caller's most recent action (rating, suspend, bury or reset).

        Only what this service wrote is undone, and only while the card is still as that
        action left it; a stale undo changes nothing and says so (`undone` False).
        """
        if not self._undo:
            return None
        record = self._undo.pop()
        if record.cram:
            return UndoResult(record.kind, record.question_id, True, cram=True)
        from quizzer.review.undo import revert

        with self.sessions.begin() as session:
            undone = revert(session, record)
        return UndoResult(record.kind, record.question_id, undone)

    @property
    def last_action(self) -> UndoRecord | None:
        """This caller's most recent action still on the undo stack."""
        return self._undo[-1] if self._undo else None

    def adopt_aliases(self) -> int:
        """Move schedules and history recorded under a renamed question's old ids."""
        if not self.bank.aliases:
            return 0
        with self._reads() as reads:
            if not reads.recorded(list(self.bank.aliases)):
                return 0  # the usual case, settled without opening the database
        from sqlalchemy import select, update

        from quizzer.db.models import CardRow, ReviewRow

        moved = 0
        with self.sessions.begin() as session:
            old_rows = session.scalars(
                select(CardRow).where(CardRow.question_id.in_(list(self.bank.aliases)))
            ).all()
            for row in old_rows:
                new_id = self.bank.aliases[row.question_id]
                old_id = row.question_id
                if session.get(CardRow, new_id) is None:
                    session.execute(
                        update(CardRow)
                        .where(CardRow.question_id == old_id)
                        .values(question_id=new_id)
                    )
                    moved += 1
                session.execute(
                    update(ReviewRow)
                    .where(ReviewRow.question_id == old_id)
                    .values(question_id=new_id)
                )
        return moved

    def _ensure_row(self, session: Session, question_id: str) -> CardRow:
        from quizzer.db import converters
        from quizzer.db.models import CardRow

        question = self._question(question_id)
        row = session.get(CardRow, question.id)
        if row is None:
            row = converters.new_row(question.id, self.clock())
            session.add(row)
        return row

    def _change(self, kind: ActionKind, question_id: str, **values: object) -> None:
        """Set columns of one card and record the change for undo."""
        question = self._question(question_id)

        def work(session: Session) -> UndoRecord:
            lock_card(session, question.id)
            before = snapshot_of(session, question.id)
            row = self._ensure_row(session, question.id)
            for name, value in values.items():
                setattr(row, name, value)
            return UndoRecord(kind, question.id, before, snapshot_of(session, question.id))

        self._undo.append(self._transact(work))

    def suspend(self, question_id: str, suspended: bool = True) -> None:
        """Suspend (or unsuspend) a card; undo takes it back."""
        kind: ActionKind = "suspend" if suspended else "unsuspend"
        self._change(kind, question_id, suspended=suspended)

    def bury(self, question_id: str) -> None:
        """Hide the card until the next study day starts."""
        self._change("bury", question_id, buried_until=self.day.start_of_next_day(self.clock()))

    def reset(self, question_id: str) -> None:
        """Forget the schedule: the card is new again; its review history is kept."""
        from sqlalchemy import delete

        from quizzer.db.models import CardRow

        question = self._question(question_id)
        with self.sessions.begin() as session:
            lock_card(session, question.id)
            before = snapshot_of(session, question.id)
            session.execute(delete(CardRow).where(CardRow.question_id == question.id))
        if before is not None:
            self._undo.append(UndoRecord("reset", question.id, before, None))
