"""A tab-separated file with Anki's header lines, importable without any add-on.

Every field is quoted and no line of a field starts with `#`, so Anki (2.1.55+), which
reads a line starting with `#` as a comment, imports exactly one note per question even
when a GUID (base91) or a line of a rendered answer starts with one.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path

from quizzer.bank.model import Bank, Question
from quizzer.export.anki import ExportSummary, note_guid
from quizzer.export.notes import ROOT_DECK, build_notes

HEADER = (
    "#separator:Tab",
    "#html:true",
    "#notetype:Basic",
    f"#deck:{ROOT_DECK}",
    "#guid column:1",
    "#tags column:4",
    "#columns:GUID\tFront\tBack\tTags",
)


_LINE_HASH = re.compile(r"^#", re.MULTILINE)


def _no_comment(field: str) -> str:
    """`#` at the start of a line becomes `&#35;`: the same character once Anki renders it."""
    return _LINE_HASH.sub("&#35;", field) if "#" in field else field


def _back(fields: tuple[str, ...]) -> str:
    _, _, answer, key_points, follow_ups, companies, _, references = fields
    parts = [answer]
    if key_points:
        parts.append(f"<h4>Key points</h4>{key_points}")
    if follow_ups:
        parts.append(f"<h4>Follow-ups</h4>{follow_ups}")
    if references:
        parts.append(f"<h4>References</h4>{references}")
    if companies:
        parts.append(f"<p><small>{companies}</small></p>")
    return "".join(parts)


def export_csv(
    bank: Bank, questions: Sequence[Question], path: Path, *, workers: int | None = None
) -> ExportSummary:
    """Write one quoted row a question: GUID, front, back (HTML) and tags."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write("\n".join(HEADER) + "\n")
        writer = csv.writer(handle, delimiter="\t", quoting=csv.QUOTE_ALL, lineterminator="\n")
        for note in build_notes(bank, questions, workers=workers):
            front = _no_comment(note.fields[1])
            writer.writerow(
                [
                    note_guid(note.guid_source),
                    front,
                    _no_comment(_back(note.fields)),
                    " ".join(note.tags),
                ]
            )
    return ExportSummary(path, len(questions), (ROOT_DECK,))
