"""Reviews made in Anki, brought back: read an exported .apkg or .colpkg with scheduling.

Only quizzer's notes count (matched by GUID, which comes from the question's first id);
other notes are counted and left alone. Each Anki answer becomes a review record for
`quizzer.db.history.import_records`, which adds it once and recomputes the card's FSRS
state from the merged history in time order.
"""

from __future__ import annotations

import tempfile
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quizzer.errors import QuizzerError
from quizzer.export.anki_schedule import import_package, require_anki

if TYPE_CHECKING:
    from quizzer.bank.model import Bank

# revlog types that are answers: learn, review, relearn, filtered (early) review.
_ANSWER_TYPES = (0, 1, 2, 3)


class AnkiFileError(QuizzerError):
    """A file that is not an Anki package quizzer can read."""


@dataclass
class AnkiReviews:
    """What an Anki file holds for quizzer."""

    records: list[dict[str, Any]] = field(default_factory=list)
    quizzer_notes: int = 0
    foreign_notes: int = 0
    unknown_guids: int = 0  # quizzer's note type but a question this bank no longer has


def read_anki_reviews(path: Path, bank: Bank) -> AnkiReviews:
    """Every answer Anki logged for quizzer's notes, as review records, oldest first."""
    require_anki()
    from quizzer.export.anki import MODEL_ID, note_guid

    _check_package(path)
    by_guid = {note_guid(q.first_id): q.id for q in bank.questions.values()}
    with tempfile.TemporaryDirectory(prefix="quizzer-anki-in-") as scratch:
        col = _open(path, Path(scratch))
        try:
            return _collect(col, by_guid, MODEL_ID)
        finally:
            col.close()


def _check_package(path: Path) -> None:
    if not path.is_file():
        raise AnkiFileError(f"{path}: no such file")
    if path.suffix.lower() not in (".apkg", ".colpkg"):
        raise AnkiFileError(f"{path}: expected an .apkg or .colpkg file exported from Anki")
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            broken = archive.testzip()
    except (zipfile.BadZipFile, OSError) as exc:
        raise AnkiFileError(
            f"{path} is not an Anki package (not a whole zip file: {exc})"
        ) from None
    if broken is not None:
        raise AnkiFileError(f"{path} is damaged (bad data in {broken})")
    if not names & {"collection.anki21b", "collection.anki21", "collection.anki2"}:
        raise AnkiFileError(f"{path} is a zip file but not an Anki package (no collection in it)")


def _open(path: Path, scratch: Path) -> Any:
    from anki.collection import Collection
    from anki.errors import AnkiException

    target = scratch / "collection.anki2"
    try:
        if path.suffix.lower() == ".colpkg":
            from anki._backend import RustBackend

            RustBackend().import_collection_package(
                col_path=str(target),
                backup_path=str(path),
                media_folder=str(scratch / "media"),
                media_db=str(scratch / "media.db"),
            )
            return Collection(str(target))
        col = Collection(str(target))
        try:
            import_package(col, path, with_scheduling=True)
        except BaseException:
            col.close()
            raise
        return col
    except AnkiException as exc:
        raise AnkiFileError(f"{path}: Anki cannot read it ({exc})") from None


def _collect(col: Any, by_guid: dict[str, str], model_id: int) -> AnkiReviews:
    out = AnkiReviews()
    qid_of_card: dict[int, str] = {}
    notes = col.db.all("SELECT n.id, n.guid, n.mid FROM notes n")
    ours = {}
    for nid, guid, mid in notes:
        if guid in by_guid:
            ours[nid] = by_guid[guid]
        elif mid == model_id:
            out.unknown_guids += 1
        else:
            out.foreign_notes += 1
    out.quizzer_notes = len(ours)
    for cid, nid in col.db.all("SELECT id, nid FROM cards"):
        if nid in ours:
            qid_of_card[cid] = ours[nid]
    answered = col.db.all(
        "SELECT id, cid, ease, time, type FROM revlog WHERE ease BETWEEN 1 AND 4"
        f" AND type IN {_ANSWER_TYPES} ORDER BY id"
    )
    for stamp, cid, ease, spent, _kind in answered:
        if cid not in qid_of_card:
            continue
        out.records.append(
            {
                "type": "review",
                "question_id": qid_of_card[cid],
                "rating": int(ease),
                "reviewed_at": datetime.fromtimestamp(stamp / 1000, UTC),
                "duration_ms": int(spent) if spent else None,
                "derived": True,
            }
        )
    return out
