"""The CSV and .apkg exports arrive in a real Anki collection exactly as written."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from quizzer.bank.loader import check_bank
from quizzer.bank.model import Bank
from quizzer.export.anki import export_apkg, note_guid
from quizzer.export.csv_export import HEADER, export_csv

anki_collection = pytest.importorskip("anki.collection")

MEDIA_TAGS = "[sound:evil.mp3] [anki:tts lang=en_US]spoken[/anki:tts] [anki:play:q:0]"
MEDIA_BANK = f"""\
- id: media-tags
  topic: gpu
  difficulty: easy
  question: "Why does {MEDIA_TAGS} stay text?"
  answer: "Bank text is shown as written: {MEDIA_TAGS}, even in `[sound:code.mp3]`."
  key_points: ["{MEDIA_TAGS}"]
  follow_ups: ["And [SOUND:upper.mp3]?"]
  references:
    - title: "Anki manual [sound:ref.mp3]"
      url: https://docs.ankiweb.net/importing/text-files.html
- id: hash-lines
  topic: gpu
  difficulty: easy
  question: Do hash lines survive the CSV?
  answer: |
    One line,
    #two starts a line.

    ```
    # a comment in plain code
    ```
  key_points: [kept]
"""


@pytest.fixture
def collection(tmp_path: Path):
    col = anki_collection.Collection(str(tmp_path / "collection.anki2"))
    yield col
    col.close()


@pytest.fixture(scope="module")
def builtin() -> Bank:
    bank, problems = check_bank()
    assert problems == []
    return bank


@pytest.fixture(scope="module")
def media_bank(tmp_path_factory: pytest.TempPathFactory) -> Bank:
    path = tmp_path_factory.mktemp("media") / "media.yaml"
    path.write_text(MEDIA_BANK, encoding="utf-8")
    bank, problems = check_bank([path])
    assert problems == []
    return bank


def import_csv(col, path: Path) -> None:
    from anki.import_export_pb2 import ImportCsvRequest

    metadata = col.get_csv_metadata(str(path), None)
    col.import_csv(ImportCsvRequest(path=str(path), metadata=metadata))


def import_apkg(col, path: Path) -> None:
    from anki.import_export_pb2 import ImportAnkiPackageOptions, ImportAnkiPackageRequest

    col.import_anki_package(
        ImportAnkiPackageRequest(
            package_path=str(path), options=ImportAnkiPackageOptions(with_scheduling=False)
        )
    )


def shown(field: str) -> str:
    """What a reader sees: the field's text without tags, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", field))


def test_whole_builtin_bank_imports_one_note_per_question(builtin, collection, tmp_path):
    path = tmp_path / "bank.csv"
    questions = list(builtin.questions.values())
    export_csv(builtin, questions, path)
    guids = {note_guid(q.first_id) for q in questions}
    assert any(guid.startswith("#") for guid in guids)  # the case Anki read as a comment
    import_csv(collection, path)
    assert collection.note_count() == len(questions)
    imported = {collection.get_note(i).guid for i in collection.find_notes("")}
    assert imported == guids


def test_csv_declares_its_format_and_no_line_is_a_comment(builtin, tmp_path):
    path = tmp_path / "bank.csv"
    export_csv(builtin, list(builtin.questions.values()), path)
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[: len(HEADER)] == list(HEADER)
    assert {"#separator:Tab", "#html:true", "#guid column:1", "#notetype:Basic"} <= set(HEADER)
    body = lines[len(HEADER) :]
    assert not [line for line in body if line.startswith("#")]
    assert body[0].startswith('"')


def test_csv_field_lines_starting_with_hash_keep_their_text(media_bank, collection, tmp_path):
    path = tmp_path / "hash.csv"
    export_csv(media_bank, list(media_bank.questions.values()), path)
    body = path.read_text(encoding="utf-8").split("\n")[len(HEADER) :]
    assert not [line for line in body if line.startswith("#")]
    import_csv(collection, path)
    assert collection.note_count() == len(media_bank.questions)
    note = collection.get_note(collection.find_notes('"Front:*hash lines*"')[0])
    assert "#two starts a line" in shown(note["Back"])
    assert "# a comment in plain code" in shown(note["Back"])


def assert_inert(col, field: str) -> None:
    assert col._backend.extract_av_tags(text=field, question_side=True).av_tags == []
    assert col._backend.extract_av_tags(text=field, question_side=False).av_tags == []
    assert col.media.files_in_str(col.models.all_names_and_ids()[0].id, field) == []


def test_apkg_media_tags_arrive_as_text(media_bank, collection, tmp_path):
    path = tmp_path / "media.apkg"
    export_apkg(media_bank, list(media_bank.questions.values()), path)
    import_apkg(collection, path)
    note = collection.get_note(collection.find_notes('"Id:media-tags"')[0])
    for name in ("Question", "Answer", "KeyPoints", "FollowUps", "References"):
        assert_inert(collection, note[name])
    assert MEDIA_TAGS in shown(note["Question"]) and MEDIA_TAGS in shown(note["KeyPoints"])
    assert "[sound:code.mp3]" in shown(note["Answer"])
    assert "[SOUND:upper.mp3]" in shown(note["FollowUps"])
    assert "Anki manual [sound:ref.mp3]" in shown(note["References"])
    card = note.cards()[0]
    assert card.question_av_tags() == [] and card.answer_av_tags() == []


def test_csv_media_tags_arrive_as_text(media_bank, collection, tmp_path):
    path = tmp_path / "media.csv"
    export_csv(media_bank, list(media_bank.questions.values()), path)
    import_csv(collection, path)
    note = collection.get_note(collection.find_notes('"Front:*stay text*"')[0])
    assert_inert(collection, note["Front"])
    assert_inert(collection, note["Back"])
    assert MEDIA_TAGS in shown(note["Front"]) and MEDIA_TAGS in shown(note["Back"])
    card = note.cards()[0]
    assert card.question_av_tags() == [] and card.answer_av_tags() == []
