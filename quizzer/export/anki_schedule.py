"""The deck with its schedule: Anki (with FSRS on) continues where quizzer is.

Built with the real `anki` library (the optional ``anki`` extra): the plain deck is
imported into a scratch collection, every started card gets quizzer's state (type, queue,
due, interval, FSRS stability and difficulty, last review), its review log is written to
Anki's revlog, and the collection is exported as a package with scheduling.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quizzer.errors import QuizzerError

if TYPE_CHECKING:
    from quizzer.bank.model import Bank, Question
    from quizzer.review.clock import DayBoundary

ANKI_EXTRA = "pip install 'quizzer[anki]'"
# Anki's card types and queues (rslib's CardType and CardQueue).
_TYPE = {1: 1, 2: 2, 3: 3}  # quizzer learning/review/relearning -> Anki learn/review/relearn
_QUEUE_LEARN, _QUEUE_REVIEW, _QUEUE_DAY_LEARN = 1, 2, 3
_QUEUE_SUSPENDED, _QUEUE_BURIED = -1, -3
# revlog types: 0 learn, 1 review, 2 relearn
_REVLOG_TYPE = {None: 0, 1: 0, 2: 1, 3: 2}


@dataclass(frozen=True, slots=True)
class ScheduledCard:
    """What Anki needs of one started card."""

    question_id: str
    state: int
    due: datetime
    last_review: datetime
    stability: float
    difficulty: float
    reps: int
    lapses: int
    suspended: bool
    buried: bool


@dataclass(frozen=True, slots=True)
class LoggedReview:
    """One review for Anki's revlog."""

    question_id: str
    reviewed_at: datetime
    rating: int
    duration_ms: int | None
    state_before: int | None
    state_after: int
    due_after: datetime
    previous_due: datetime | None


def read_schedule(
    sessions: Any, bank: Bank, now: datetime
) -> tuple[list[ScheduledCard], list[LoggedReview]]:
    """Every started card of the bank and every review of them, oldest first."""
    from sqlalchemy import select

    from quizzer.db.models import CardRow, ReviewRow

    cards, reviews = [], []
    with sessions() as session:
        for row in session.scalars(select(CardRow).where(CardRow.last_review.is_not(None))):
            if row.question_id not in bank.questions:
                continue
            buried = row.buried_until is not None and row.buried_until > now
            cards.append(
                ScheduledCard(
                    row.question_id,
                    row.state,
                    row.due,
                    row.last_review,
                    row.stability,
                    row.difficulty,
                    row.reps,
                    row.lapses,
                    row.suspended,
                    buried,
                )
            )
        previous: dict[str, datetime] = {}
        query = select(ReviewRow).order_by(ReviewRow.reviewed_at, ReviewRow.id)
        for r in session.scalars(query.execution_options(yield_per=5000)):
            reviews.append(
                LoggedReview(
                    r.question_id,
                    r.reviewed_at,
                    r.rating,
                    r.duration_ms,
                    r.state_before,
                    r.state_after,
                    r.due_after,
                    previous.get(r.question_id),
                )
            )
            previous[r.question_id] = r.due_after
    return cards, reviews


def require_anki() -> None:
    """One line naming the extra when the `anki` library is missing."""
    try:
        import anki.collection  # noqa: F401
    except ModuleNotFoundError:
        raise QuizzerError(f"this needs the anki library: {ANKI_EXTRA}") from None


def export_with_schedule(
    bank: Bank,
    questions: Sequence[Question],
    cards: Iterable[ScheduledCard],
    reviews: Iterable[LoggedReview],
    path: Path,
    *,
    now: datetime,
    day: DayBoundary,
    retention: float,
) -> int:
    """Write `path`: the deck plus schedule and review log. Returns the cards scheduled."""
    require_anki()
    from anki.collection import Collection

    from quizzer.export.anki import export_apkg, note_guid

    with tempfile.TemporaryDirectory(prefix="quizzer-anki-") as scratch:
        plain = Path(scratch) / "plain.apkg"
        export_apkg(bank, questions, plain)
        col = Collection(str(Path(scratch) / "collection.anki2"))
        try:
            import_package(col, plain, with_scheduling=False)
            _enable_fsrs(col, retention)
            by_guid = _card_ids(col)
            wanted = {note_guid(q.first_id): q.id for q in questions}
            cid = {wanted[g]: c for g, c in by_guid.items() if g in wanted}
            updated = [
                _schedule(col, cid[card.question_id], card, now, day)
                for card in cards
                if card.question_id in cid
            ]
            col.update_cards(updated, skip_undo_entry=True)
            scheduled = len(updated)
            _write_revlog(col, cid, reviews)
            _export(col, path)
        finally:
            col.close()
    return scheduled


def import_package(col: Any, path: Path, *, with_scheduling: bool) -> None:
    """Import an .apkg into the open collection `col`."""
    from anki.import_export_pb2 import ImportAnkiPackageOptions, ImportAnkiPackageRequest

    col.import_anki_package(
        ImportAnkiPackageRequest(
            package_path=str(path),
            options=ImportAnkiPackageOptions(
                with_scheduling=with_scheduling, with_deck_configs=with_scheduling
            ),
        )
    )


def _enable_fsrs(col: Any, retention: float) -> None:
    # Anki 25 has FSRS behind a collection-wide switch (the "fsrs" key), which a package
    # does not carry: the user turns it on once. From Anki 26 FSRS is the only scheduler.
    # The cards' memory states and the deck's desired retention travel in the package.
    col.set_config("fsrs", True)
    for config in col.decks.all_config():
        config["desiredRetention"] = retention
        col.decks.update_config(config)


def _card_ids(col: Any) -> dict[str, int]:
    rows = col.db.all("SELECT n.guid, c.id FROM cards c JOIN notes n ON n.id = c.nid")
    return {guid: cid for guid, cid in rows}


def _day_offset(due: datetime, now: datetime, day: DayBoundary) -> int:
    """Study days from today to `due` (0: due today or earlier days are negative)."""
    delta = day.start_of_day(due) - day.start_of_day(now)
    return round(delta.total_seconds() / 86400)


def _schedule(col: Any, cid: int, card: ScheduledCard, now: datetime, day: DayBoundary) -> Any:
    """Anki's card `cid` carrying quizzer's state (written by the caller, in one batch)."""
    from anki.cards_pb2 import FsrsMemoryState

    anki_card = col.get_card(cid)
    anki_card.type = _TYPE[card.state]
    offset = _day_offset(card.due, now, day)
    if card.state == 2:
        anki_card.queue = _QUEUE_REVIEW
        anki_card.due = col.sched.today + offset
        anki_card.ivl = max(1, _day_offset(card.due, card.last_review, day))
    elif offset <= 0:  # a learning step due today: Anki keeps these in epoch seconds
        anki_card.queue = _QUEUE_LEARN
        anki_card.due = int(card.due.timestamp())
        anki_card.ivl = 0
        anki_card.left = 1
    else:
        anki_card.queue = _QUEUE_DAY_LEARN
        anki_card.due = col.sched.today + offset
        anki_card.left = 1
    if card.suspended:
        anki_card.queue = _QUEUE_SUSPENDED
    elif card.buried:
        anki_card.queue = _QUEUE_BURIED
    anki_card.reps = card.reps
    anki_card.lapses = card.lapses
    anki_card.memory_state = FsrsMemoryState(stability=card.stability, difficulty=card.difficulty)
    anki_card.last_review_time = int(card.last_review.timestamp())
    return anki_card


def _interval(after: datetime, at: datetime, state: int) -> int:
    """revlog's interval: days for a review card, negative seconds for a learning step."""
    if state == 2:
        return max(1, round((after - at) / timedelta(days=1)))
    return -max(1, int((after - at).total_seconds()))


def _write_revlog(col: Any, cid: dict[str, int], reviews: Iterable[LoggedReview]) -> None:
    taken = set(col.db.list("SELECT id FROM revlog"))
    rows = []
    for review in reviews:
        if review.question_id not in cid:
            continue
        stamp = int(review.reviewed_at.timestamp() * 1000)
        while stamp in taken:  # revlog ids are unique milliseconds
            stamp += 1
        taken.add(stamp)
        last = (
            _interval(review.previous_due, review.reviewed_at, review.state_before or 1)
            if review.previous_due is not None
            else 0
        )
        rows.append(
            (
                stamp,
                cid[review.question_id],
                -1,
                review.rating,
                _interval(review.due_after, review.reviewed_at, review.state_after),
                last,
                0,
                min(max(review.duration_ms or 0, 0), 60_000),
                _REVLOG_TYPE[review.state_before],
            )
        )
    # Many rows per statement: the library's executemany runs one statement per row.
    per = 1000
    for start in range(0, len(rows), per):
        chunk = rows[start : start + per]
        values = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(chunk))
        col.db.execute(
            "INSERT INTO revlog (id, cid, usn, ease, ivl, lastIvl, factor, time, type)"
            f" VALUES {values}",
            *[value for row in chunk for value in row],
        )


def _export(col: Any, path: Path) -> None:
    from anki.generic_pb2 import Empty
    from anki.import_export_pb2 import ExportAnkiPackageOptions, ExportLimit

    col.export_anki_package(
        out_path=str(path),
        options=ExportAnkiPackageOptions(
            with_scheduling=True, with_deck_configs=True, with_media=False
        ),
        limit=ExportLimit(whole_collection=Empty()),
    )
