"""The .apkg deck: constant note type and deck ids, GUIDs from question ids."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import genanki

from quizzer.bank.model import Bank, Question
from quizzer.export.notes import FIELDS, ROOT_DECK, build_notes
from quizzer.export.style import CARD_CSS

MODEL_ID = 1_607_392_319  # never change: Anki matches the note type by this id
MODEL_NAME = "quizzer: AI infra question"

FRONT = """<div class="meta">{{Topic}}</div>
<div class="question">{{Question}}</div>
{{#Companies}}<div class="asked">{{Companies}}</div>{{/Companies}}"""

BACK = """{{FrontSide}}
<hr id="answer">
<div class="answer">{{Answer}}</div>
{{#KeyPoints}}<div class="section"><h4>Key points</h4>{{KeyPoints}}</div>{{/KeyPoints}}
{{#FollowUps}}<div class="section"><h4>Follow-ups</h4>{{FollowUps}}</div>{{/FollowUps}}
{{#References}}<div class="section refs"><h4>References</h4>{{References}}</div>{{/References}}
<div class="qid">{{Id}}</div>"""


def note_guid(question_id: str) -> str:
    """Stable per question id (never per text), so re-imports update in place."""
    return genanki.guid_for("quizzer", question_id)


def deck_id(name: str) -> int:
    digest = hashlib.sha1(f"quizzer-deck:{name}".encode()).digest()
    return 1 << 30 | int.from_bytes(digest[:4], "big") >> 2  # stable, positive, 31 bits


def _model() -> genanki.Model:
    return genanki.Model(
        MODEL_ID,
        MODEL_NAME,
        fields=[{"name": name} for name in FIELDS],
        templates=[{"name": "Card 1", "qfmt": FRONT, "afmt": BACK}],
        css=CARD_CSS,
        sort_field_index=1,
    )


@dataclass(frozen=True, slots=True)
class ExportSummary:
    path: Path
    notes: int
    decks: tuple[str, ...]


def export_apkg(
    bank: Bank,
    questions: Sequence[Question],
    path: Path,
    *,
    timestamp: float | None = None,
    workers: int | None = None,
) -> ExportSummary:
    """Write the deck. `timestamp` becomes every note's modification time: Anki only
    updates an existing note from a package whose note is newer, so it defaults to now.
    `workers`: processes that build the notes (see `notes.build_notes`)."""
    model = _model()
    decks: dict[str, genanki.Deck] = {ROOT_DECK: genanki.Deck(deck_id(ROOT_DECK), ROOT_DECK)}
    for note in build_notes(bank, questions, workers=workers):
        if note.deck not in decks:
            decks[note.deck] = genanki.Deck(deck_id(note.deck), note.deck)
        decks[note.deck].add_note(
            genanki.Note(
                model=model,
                fields=list(note.fields),
                tags=list(note.tags),
                guid=note_guid(note.guid_source),
            )
        )
    package = genanki.Package(list(decks.values()))
    package.write_to_file(str(path), timestamp=timestamp if timestamp is not None else time.time())
    return ExportSummary(path, len(questions), tuple(sorted(decks)))
