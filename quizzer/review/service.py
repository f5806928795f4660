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
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, TypeVar

from quizzer.bank.model import Bank, Filters, Question
from quizzer.bank.order import Preferences, new_card_order
from quizzer.errors import CorruptCardError, UnknownIdError
from quizzer.review.clock import Clock, DayBoundary, system_clock
from quizzer.review.fuzz import seed_for, seeded
from quizzer.review.model import (
    STATE_NAMES,
    CardInfo,
    DayCounts,
    HistoryEntry,
    Rating,
    RatingOutcome,
)
from quizzer.review.settings import (
    AIMS,
    PLAN_TARGET_KEY,
    PREFIX,
    StudySettings,
    from_rows,
    name_of,
    to_stored,
)
from quizzer.review.undo import ActionKind, UndoRecord, UndoResult, lock_card, snapshot_of

if TYPE_CHECKING:
    from fsrs import Scheduler
    from sqlalchemy.orm import Session, sessionmaker

    from quizzer.db.lazy import LazySessions
    from quizzer.db.models import CardRow
    from quizzer.review.reads import CardReads

T = TypeVar("T")
EXTRA_NEW_KEY = "study-today.extra-new"  # {"day": start of the study day, "count": n}


@dataclass(frozen=True, slots=True)
class QueueParts:
    """The cards a sitting draws from (see `ReviewService.queue_parts`)."""

    learning: list[tuple[str, datetime]]  # learning and relearning cards, earliest due first
    reviews: list[str]  # review cards due now, lowest retrievability first
    new: list[str]  # new cards in their learning order, within the limit
    new_held_back: int  # new cards the limit kept out of today
    new_room: int  # how many new cards today's limit leaves

    def learning_due(self, until: datetime) -> list[str]:
        """Learning cards due by `until`."""
        return [qid for qid, due in self.learning if due <= until]


def _extra_today(rows: dict[str, str], day_start: datetime) -> int:
    import json

    try:
        stored = json.loads(rows.get(EXTRA_NEW_KEY, "null"))
    except ValueError:
        return 0
    if isinstance(stored, dict) and stored.get("day") == day_start.isoformat():
        count = stored.get("count", 0)
        return count if isinstance(count, int) and count > 0 else 0
    return 0


# SQLAlchemy, fsrs and the ORM models are imported where they are first used, so that
# importing this module (the study screen does) costs nothing before a query runs.


class ReviewService:
    """Reads and changes the schedule; built once per command (or app) by the factory."""

    def __init__(
        self,
        sessions: sessionmaker[Session] | LazySessions,
        bank: Bank,
        *,
        clock: Clock = system_clock,
        settings: StudySettings | None = None,
        scheduler: Scheduler | None = None,
        day: DayBoundary | None = None,
        quick: CardReads | None = None,
        fuzz: bool = True,
    ) -> None:
        self.sessions = sessions
        self.bank = bank
        self.clock = clock
        self.quick = quick
        self.fuzz = fuzz
        self._settings = settings  # None: read from the database when first needed
        self._fixed_scheduler = scheduler
        self._scheduler: Scheduler | None = None
        self._fixed_day = day
        self._undo: list[UndoRecord] = []  # this caller's actions, newest last
        self.damaged: dict[str, str] = {}  # question id -> why its stored row is unusable

    @property
    def database_url(self) -> str:
        """The URL of the database in use (with its password: hide it before showing)."""
        url = getattr(self.sessions, "url", None)
        if url is None:  # a plain sessionmaker: its engine knows
            bind = self.sessions.kw.get("bind")  # type: ignore[union-attr]
            return bind.url.render_as_string(hide_password=False) if bind else ""
        return str(url)

    # -- settings ------------------------------------------------------------------------

    @property
    def settings(self) -> StudySettings:
        """The study settings stored in the database (defaults for any not set)."""
        if self._settings is None:
            with self.reads() as reads:
                self._settings = from_rows(reads.settings(PREFIX))
        return self._settings

    @property
    def scheduler(self) -> Scheduler:
        """The FSRS scheduler the settings describe."""
        if self._fixed_scheduler is not None:
            return self._fixed_scheduler
        if self._scheduler is None:
            from fsrs import Scheduler

            s = self.settings
            fitted = {"parameters": s.parameters.values} if s.parameters else {}
            self._scheduler = Scheduler(
                **fitted,
                desired_retention=s.desired_retention,
                learning_steps=s.learning_steps,
                relearning_steps=s.relearning_steps,
                enable_fuzzing=self.fuzz,
            )
        return self._scheduler

    @property
    def day(self) -> DayBoundary:
        """When a study day starts (the `day-starts-at` setting, local time)."""
        return self._fixed_day or DayBoundary(hour=self.settings.day_starts_at)

    def save_settings(self, **changes: object) -> StudySettings:
        """Store changed settings (StudySettings field names); the scheduler follows them."""
        from quizzer.db.settings import SettingsStore

        store = SettingsStore(self.sessions)  # type: ignore[arg-type]
        updated = replace(self.settings, **changes)  # type: ignore[arg-type]
        for field, value in changes.items():
            store.set_text(PREFIX + name_of(field), to_stored(value))
        self._settings = updated
        self._scheduler = None
        return updated

    def needs_setup(self) -> bool:
        """True until target companies, level or focus topics have been stored (or skipped)."""
        with self.reads() as reads:
            stored = reads.settings(PREFIX)
        return not any(PREFIX + name in stored for name in AIMS)

    def preferences(self, filters: Filters = Filters()) -> Preferences:  # noqa: B008
        """What the new-card order aims at: `--company` if given, else the settings."""
        s = self.settings
        return Preferences(filters.companies or s.companies, s.level, s.focus)

    def extra_new_today(self) -> int:
        """New cards added to today's limit (custom study); 0 again on a new day."""
        with self.reads() as reads:
            rows = reads.settings(EXTRA_NEW_KEY)
        return _extra_today(rows, self.day.start_of_day(self.clock()))

    def new_left_today(self, counts: DayCounts) -> int:
        """How many more new cards today's limit (custom study included) lets in."""
        return max(0, self.settings.new_per_day + self.extra_new_today() - counts.new_done)

    def add_new_today(self, count: int) -> int:
        """Raise today's new-card limit by `count`; returns today's extra in all."""
        from quizzer.db.settings import SettingsStore

        total = self.extra_new_today() + count
        today = self.day.start_of_day(self.clock()).isoformat()
        store = SettingsStore(self.sessions)  # type: ignore[arg-type]
        store.set(EXTRA_NEW_KEY, {"day": today, "count": total})
        return total

    def open(self) -> None:
        """Open the database (SQLAlchemy, migrations) now; reads use it from then on."""
        with self.sessions() as session:
            session.connection()
        self.quick = None

    @contextmanager
    def reads(self) -> Iterator[CardReads]:
        """The read-only queries, quick (no SQLAlchemy) until the database is opened."""
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
        """Question ids to study now: learning cards due, due reviews (lowest
        retrievability first), then new cards in their learning order, within today's
        limits. Cram offers every selected card, schedule aside."""
        parts = self.queue_parts(filters, cram=cram)
        return parts.learning_due(self.clock()) + parts.reviews + parts.new

    def queue_parts(
        self,
        filters: Filters = Filters(),  # noqa: B008
        *,
        cram: bool = False,
        new_limit: int | None = None,
    ) -> QueueParts:
        """What a sitting draws from, as Anki splits it: learning cards (each with its due
        time, also those due later today), reviews due now and new cards.

        Reviews are capped by what is left of `reviews-per-day`. New cards are capped by
        what is left of `new-per-day` plus today's extra, except that an explicit
        `new_limit` (``--new N``) or an `--interview` replay sets the number itself.
        """
        now = self.clock()
        ids = self._ids(filters)
        selected = ids if ids is not None else list(self.bank.questions)
        settings = self.settings
        with self.reads() as reads:
            if cram:
                started = reads.due_ids(now + timedelta(days=36500), ids, None)
                fresh = [i for i in selected if i not in set(started)]
                new = self._rank_new(fresh, filters)
                return QueueParts([], self._known(started), new, 0, len(new))
            done = reads.review_counts_since(self.day.start_of_day(now))
            review_room = max(0, settings.reviews_per_day - done.get(2, 0))
            reviews = reads.due_ids(now, ids, review_room, states=(2,))
            learning = reads.learning_cards(ids)
            blocked = reads.not_new_ids(now)
            extra = _extra_today(reads.settings(EXTRA_NEW_KEY), self.day.start_of_day(now))
        fresh = self._rank_new([i for i in selected if i not in blocked], filters)
        if new_limit is not None:
            room = new_limit
        elif filters.interview:
            room = len(fresh)
        else:
            room = max(0, settings.new_per_day + extra - done.get(None, 0))
        known = set(self.bank.questions)
        learning = [(qid, due) for qid, due in learning if qid in known]
        if filters.empty and new_limit is None and (planned := self._planned_today()):
            new = [i for i in planned[0] if i not in blocked]  # a plan runs: its cards
            final = [i for i in planned[1] if i not in set(reviews)]
            return QueueParts(learning, self._known(reviews + final), new, 0, len(new))
        return QueueParts(learning, self._known(reviews), fresh[:room], len(fresh[room:]), room)

    def _planned_today(self) -> tuple[list[str], list[str]] | None:
        """(new cards, final reviews) of today while a study plan runs (see review.plan)."""
        with self.reads() as reads:
            text = reads.settings(PLAN_TARGET_KEY).get(PLAN_TARGET_KEY)
        if not text or text == "null":
            return None  # no plan: the plan module is not even imported (startup time)
        from quizzer.review.plan import PlanTarget, todays_cards

        target = PlanTarget.from_json(text)  # the setting read once, not again by the plan
        return todays_cards(self, target) if target is not None else None

    def _known(self, ids: Sequence[str]) -> list[str]:
        return [i for i in ids if i in self.bank.questions]  # removed questions stay hidden

    def _rank_new(self, ids: Sequence[str], filters: Filters) -> list[str]:
        questions = [self.bank.questions[i] for i in ids]
        return [q.id for q in new_card_order(self.bank, questions, self.preferences(filters))]

    def card(self, question_id: str) -> CardInfo:
        from quizzer.db import converters

        question = self._question(question_id)
        with self.reads() as reads:
            row = reads.card(question.id)
            return converters.card_info(question, row, self.scheduler, self.clock())

    def cards(self) -> dict[str, CardInfo]:
        """Every bank question's card, new ones included (for browsing and stats).

        A card whose stored row is damaged is left out and named in `damaged`."""
        from quizzer.db import converters

        now = self.clock()
        with self.reads() as reads:
            rows = reads.all_cards()
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
        with self.reads() as reads:
            card = converters.to_fsrs(reads.card(question.id), now, question.id)
        out = {}
        for rating in Rating:
            with seeded(seed_for(question.id, int(rating), card.last_review, card.step)):
                after, _ = self.scheduler.review_card(card, FsrsRating(int(rating)), now)
            out[rating] = after.due - now
        return out

    def day_counts(self, filters: Filters = Filters()) -> DayCounts:  # noqa: B008
        """Today's reviews and new cards so far, what is due now and what is new."""
        now = self.clock()
        ids = self._ids(filters)
        with self.reads() as reads:
            done_reviews, done_new = reads.counts_since(self.day.start_of_day(now))
            due = reads.count_due(now, ids)
            blocked = reads.not_new_ids(now)
        selected = ids if ids is not None else list(self.bank.questions)
        new = sum(1 for i in selected if i not in blocked)
        return DayCounts(done_reviews, done_new, due, new)

    def next_due(self, filters: Filters = Filters()) -> datetime | None:  # noqa: B008
        """When the next started card of the selection falls due (suspended and buried
        cards aside); it can be in the past when cards are due now."""
        from sqlalchemy import func, select

        from quizzer.db.models import CardRow
        from quizzer.review.queries import available

        ids = self._ids(filters)
        query = select(func.min(CardRow.due)).where(
            CardRow.last_review.is_not(None), *available(self.clock())
        )
        if ids is not None:
            query = query.where(CardRow.question_id.in_(ids))
        with self.sessions() as session:
            due = session.scalar(query)
        if isinstance(due, str):  # min() over SQLite text loses the column type
            from quizzer.db.utc import from_stored

            due = from_stored(due)
        return due

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
        became_leech = lapsed and not row.leech and row.lapses >= self.settings.leech_threshold
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
        with self.reads() as reads:
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
