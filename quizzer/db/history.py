"""Portable history: every review, card state, setting and exercise attempt as JSON lines.

The first line names the format and its version; each later line is one record with a
``type``. Import merges into any database (SQLite or PostgreSQL) and is idempotent:

- a review is the same review when question, time and rating match; it is added once;
- a card the target has never seen takes the file's state exactly (suspended, buried,
  leech and all); a card both sides have reviewed, and that gained reviews, has its FSRS
  state recomputed from the merged history in time order (see `quizzer.db.replay`);
- a setting the target already has keeps the target's value; an attempt is added once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any

from sqlalchemy import select

from quizzer.db.models import CardRow, ExerciseAttemptRow, ReviewRow, SettingRow
from quizzer.errors import QuizzerError

if TYPE_CHECKING:
    from fsrs import Scheduler
    from sqlalchemy.orm import Session, sessionmaker

FORMAT = "quizzer-history"
VERSION = 1
_BATCH = 5000
_SAME_REVIEW_MS = 20  # one card is never answered twice with one rating within 20 ms
_TIMES = {"due", "last_review", "buried_until", "created_at", "reviewed_at", "due_after"}
_TIMES |= {"started_at"}
_CARD = [c.key for c in CardRow.__table__.columns]
_REVIEW = [c.key for c in ReviewRow.__table__.columns if c.key != "id"]
_ATTEMPT = [c.key for c in ExerciseAttemptRow.__table__.columns if c.key != "id"]


class HistoryFormatError(QuizzerError):
    """A history file that is not one, or from a newer format version."""


@dataclass
class ImportReport:
    """What an import added and what it left as it was."""

    reviews_added: int = 0
    reviews_known: int = 0
    cards_added: int = 0
    cards_recomputed: int = 0
    settings_added: int = 0
    settings_kept: int = 0
    attempts_added: int = 0
    attempts_known: int = 0
    touched: set[str] = field(default_factory=set)


def _encode(row: Any, columns: list[str], kind: str) -> str:
    data: dict[str, Any] = {"type": kind}
    for name in columns:
        value = getattr(row, name)
        data[name] = value.astimezone(UTC).isoformat() if isinstance(value, datetime) else value
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def export_lines(sessions: sessionmaker[Session], now: datetime) -> Iterator[str]:
    """The whole history, one JSON document per line, oldest review first."""
    from quizzer.db.schema import HEAD

    header = {"format": FORMAT, "version": VERSION, "schema": HEAD, "exported_at": now.isoformat()}
    yield json.dumps(header)
    with sessions() as session:
        queries = [
            (select(SettingRow).order_by(SettingRow.key), None, "setting"),
            (select(CardRow).order_by(CardRow.question_id), _CARD, "card"),
            (select(ReviewRow).order_by(ReviewRow.reviewed_at, ReviewRow.id), _REVIEW, "review"),
            (select(ExerciseAttemptRow).order_by(ExerciseAttemptRow.id), _ATTEMPT, "attempt"),
        ]
        for query, columns, kind in queries:
            for row in session.scalars(query.execution_options(yield_per=_BATCH)):
                if columns is None:
                    yield json.dumps({"type": kind, "key": row.key, "value": json.loads(row.value)})
                else:
                    yield _encode(row, columns, kind)


def write_history(sessions: sessionmaker[Session], out: IO[str], now: datetime) -> int:
    """Write the history to `out`; return the number of records (header excluded)."""
    count = -1
    for count, line in enumerate(export_lines(sessions, now)):  # noqa: B007
        out.write(line + "\n")
    return count


def read_lines(lines: Iterable[str], source: str) -> Iterator[dict[str, Any]]:
    """Parse and check a history stream; every problem is one line naming the place."""
    it = iter(lines)
    try:
        header = json.loads(next(it))
    except (StopIteration, json.JSONDecodeError, UnicodeDecodeError):
        raise HistoryFormatError(f"{source} is not a quizzer history file") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise HistoryFormatError(f"{source} is not a quizzer history file")
    version = header.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise HistoryFormatError(
            f"{source} has history format version {version}; this quizzer reads up to {VERSION}"
        )
    for number, text in enumerate(it, start=2):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
            if not isinstance(record, dict) or "type" not in record:
                raise ValueError("not a record")
            yield _decode(record)
        except (ValueError, TypeError, KeyError) as exc:
            raise HistoryFormatError(f"{source}:{number}: bad record ({exc})") from None


def _required(columns: list[str], table: Any) -> set[str]:
    return {c for c in columns if not table.columns[c].nullable}


REQUIRED = {
    "review": _required(_REVIEW, ReviewRow.__table__) - {"state_after", "due_after"},
    "card": _required(_CARD, CardRow.__table__),
    "attempt": _required(_ATTEMPT, ExerciseAttemptRow.__table__),
    "setting": {"key", "value"},
}


def _decode(record: dict[str, Any]) -> dict[str, Any]:
    kind = record["type"]
    if kind not in REQUIRED:
        raise ValueError(f"unknown record type {kind!r}")
    required = REQUIRED[kind]
    if kind == "review" and not record.get("derived"):
        required = required | {"state_after", "due_after"}
    missing = sorted(name for name in required if record.get(name) is None)
    if missing:
        raise ValueError(f"{kind} without {', '.join(missing)}")
    if kind == "review" and record["rating"] not in (1, 2, 3, 4):
        raise ValueError(f"rating {record['rating']!r} is not 1-4")
    out = dict(record)
    for name in _TIMES & out.keys():
        if out[name] is not None:
            value = datetime.fromisoformat(out[name])
            if value.tzinfo is None:
                raise ValueError(f"{name} has no timezone")
            out[name] = value.astimezone(UTC)
    return out


def import_records(
    sessions: sessionmaker[Session], records: Iterable[dict[str, Any]], scheduler: Scheduler
) -> ImportReport:
    """Merge the records into the database in one transaction (all or nothing).

    New reviews and cards go in as bulk inserts and changed cards as one bulk update, so a
    whole history (a million reviews) moves in one pass."""
    from sqlalchemy import insert, update

    report = ImportReport()
    cards: dict[str, dict[str, Any]] = {}
    new_reviews: dict[str, list[dict[str, Any]]] = {}
    with sessions.begin() as session:
        known = {
            (q, _ms(at), r)
            for q, at, r in session.execute(
                select(ReviewRow.question_id, ReviewRow.reviewed_at, ReviewRow.rating)
            )
        }
        for record in records:
            kind = record["type"]
            if kind == "review":
                _add_review(record, known, new_reviews, report)
            elif kind == "card":
                cards[record["question_id"]] = record
            elif kind == "setting":
                _add_setting(session, record, report)
            else:
                _add_attempt(session, record, report)
        stored = _stored_cards(session, report.touched | cards.keys())
        added, changed = [], []
        for qid, data in cards.items():
            if qid not in stored:  # a card this database has never seen: exactly as sent
                added.append({k: data.get(k) for k in _CARD})
                report.cards_added += 1
        for qid in sorted(report.touched):
            if qid in stored or qid not in cards:
                card = _merged(session, scheduler, qid, stored.get(qid), new_reviews[qid], cards)
                (changed if qid in stored else added).append(card)
                report.cards_recomputed += 1
        rows = [r for qid in sorted(new_reviews) for r in new_reviews[qid]]
        for start in range(0, len(rows), _BATCH):
            session.execute(insert(ReviewRow), rows[start : start + _BATCH])
        if added:
            session.execute(insert(CardRow), added)
        if changed:
            session.execute(update(CardRow), changed)
    return report


def _stored_cards(session: Session, ids: set[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    ordered = sorted(ids)
    for start in range(0, len(ordered), _BATCH):
        chunk = ordered[start : start + _BATCH]
        for row in session.scalars(select(CardRow).where(CardRow.question_id.in_(chunk))):
            out[row.question_id] = {k: getattr(row, k) for k in _CARD}
    return out


def _merged(
    session: Session,
    scheduler: Scheduler,
    qid: str,
    base: dict[str, Any] | None,
    incoming: list[dict[str, Any]],
    cards: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """The card after replaying its stored and incoming reviews in time order; incoming
    reviews without quizzer's state columns get theirs from the replay."""
    from quizzer.db.replay import merge_card

    query = (
        select(ReviewRow.reviewed_at, ReviewRow.rating)
        .where(ReviewRow.question_id == qid)
        .order_by(ReviewRow.reviewed_at, ReviewRow.id)
    )
    log = [{"reviewed_at": at, "rating": rating} for at, rating in session.execute(query)]
    return merge_card(qid, scheduler, base, log, incoming, cards.get(qid))


def _ms(at: datetime) -> int:
    """A review's time to the millisecond: what every source (Anki's log too) keeps."""
    return int(at.timestamp() * 1000)


def _add_review(
    data: dict[str, Any],
    known: set[tuple[str, int, int]],
    new_reviews: dict[str, list[dict[str, Any]]],
    report: ImportReport,
) -> None:
    qid = data["question_id"]
    ms, rating = _ms(data["reviewed_at"]), int(data["rating"])
    # Anki's log needs unique millisecond ids, so an export may have moved a review that
    # shared its millisecond with another by a few ms: still the same review.
    if any((qid, ms - shift, rating) in known for shift in range(_SAME_REVIEW_MS + 1)):
        report.reviews_known += 1
        return
    known.add((qid, ms, rating))
    row = {k: data.get(k) for k in _REVIEW}
    if data.get("derived"):  # from a log without quizzer's state columns
        row["derived"] = True
    new_reviews.setdefault(qid, []).append(row)
    report.reviews_added += 1
    report.touched.add(qid)


def _add_setting(session: Session, data: dict[str, Any], report: ImportReport) -> None:
    if session.get(SettingRow, data["key"]) is not None:
        report.settings_kept += 1
        return
    session.add(SettingRow(key=data["key"], value=json.dumps(data["value"])))
    report.settings_added += 1


def _add_attempt(session: Session, data: dict[str, Any], report: ImportReport) -> None:
    same = select(ExerciseAttemptRow.id).where(
        ExerciseAttemptRow.exercise == data["exercise"],
        ExerciseAttemptRow.track == data["track"],
        ExerciseAttemptRow.started_at == data["started_at"],
    )
    if session.scalar(same) is not None:
        report.attempts_known += 1
        return
    session.add(ExerciseAttemptRow(**{k: data.get(k) for k in _ATTEMPT}))
    report.attempts_added += 1
