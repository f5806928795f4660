"""Export proven by importing into a fresh collection of the real Anki package."""

from __future__ import annotations

import dataclasses
import html
import time
from pathlib import Path

import pytest

from quizzer.bank.loader import check_bank
from quizzer.cli.main import entry
from quizzer.export.anki import export_apkg, note_guid
from quizzer.export.csv_export import export_csv

from .conftest import FIXTURES

anki_collection = pytest.importorskip("anki.collection")


@pytest.fixture(scope="module")
def bank():
    bank, problems = check_bank([FIXTURES / "export"])
    assert problems == []
    return bank


@pytest.fixture
def collection(tmp_path):
    col = anki_collection.Collection(str(tmp_path / "collection.anki2"))
    yield col
    col.close()


def import_apkg(col, path: Path) -> None:
    from anki.import_export_pb2 import ImportAnkiPackageOptions, ImportAnkiPackageRequest

    col.import_anki_package(
        ImportAnkiPackageRequest(
            package_path=str(path), options=ImportAnkiPackageOptions(with_scheduling=False)
        )
    )


def note_by_id(col, question_id: str):
    ids = col.find_notes(f'"Id:{question_id}"')
    assert len(ids) == 1, f"{question_id}: {len(ids)} notes"
    return col.get_note(ids[0])


def test_apkg_imports_with_fields_tags_and_decks(bank, collection, tmp_path):
    path = tmp_path / "deck.apkg"
    questions = list(bank.questions.values())
    summary = export_apkg(bank, questions, path)
    import_apkg(collection, path)
    assert collection.note_count() == len(questions) == summary.notes
    note = note_by_id(collection, "e-code")
    assert note.guid == note_guid("e-code")
    assert set(note.keys()) == {
        "Id",
        "Question",
        "Answer",
        "KeyPoints",
        "FollowUps",
        "Companies",
        "Topic",
        "References",
    }
    assert "<li>shfl_down_sync</li>" in note["KeyPoints"]
    assert "48 threads" in note["FollowUps"]
    assert "docs.nvidia.com" in note["References"]
    assert note["Topic"] == html.escape(bank.topics["red"].name)
    tags = set(note.tags)
    assert {"topic::red", "difficulty::medium", "exercise"} <= tags
    assert any(t.startswith("company::") for t in tags)
    assert any(t.startswith("tier::T") for t in tags)
    deck_names = {d.name for d in collection.decks.all_names_and_ids()}
    for topic in ("red", "gpu", "kv"):
        assert f"AI Infra Interview::{bank.topics[topic].name}" in deck_names


def test_code_is_highlighted_and_math_converted(bank, collection, tmp_path):
    path = tmp_path / "deck.apkg"
    export_apkg(bank, list(bank.questions.values()), path)
    import_apkg(collection, path)
    answer = note_by_id(collection, "e-code")["Answer"]
    assert '<pre class="hl"><code class="language-cuda">' in answer
    assert '<span class="' in answer  # Pygments token spans
    assert r"\(\log_2 32 = 5\)" in answer
    assert r"\[T = 5 \cdot t_{shfl}\]" in answer
    model = collection.models.by_name("quizzer: AI infra question")
    assert ".nightMode" in model["css"] and "pre.hl" in model["css"]


def test_html_in_bank_text_arrives_escaped(bank, collection, tmp_path):
    path = tmp_path / "deck.apkg"
    export_apkg(bank, list(bank.questions.values()), path)
    import_apkg(collection, path)
    note = note_by_id(collection, "e-script")
    assert "<script>" not in note["Question"]
    assert "&lt;script&gt;" in note["Question"]
    assert "<b>" not in note["Answer"] and "&lt;b&gt;" in note["Answer"]


def test_reexport_after_edit_updates_in_place(bank, collection, tmp_path):
    questions = list(bank.questions.values())
    first = tmp_path / "v1.apkg"
    export_apkg(bank, questions, first, timestamp=time.time() - 60)
    import_apkg(collection, first)
    edited = dataclasses.replace(bank.questions["e-plain"], answer="MLA compresses the KV cache.")
    bank2 = dataclasses.replace(bank, questions={**bank.questions, "e-plain": edited})
    second = tmp_path / "v2.apkg"
    export_apkg(bank2, list(bank2.questions.values()), second)  # now: newer than v1
    import_apkg(collection, second)
    assert collection.note_count() == len(questions)
    assert "MLA compresses" in note_by_id(collection, "e-plain")["Answer"]


def test_renamed_question_keeps_its_note_guid():
    # GUIDs come from ids, never from text: an edited question keeps its note.
    assert note_guid("kv-paged") == note_guid("kv-paged")
    assert note_guid("kv-paged") != note_guid("kv-paged-2")


def test_csv_imports_with_same_note_count(bank, collection, tmp_path):
    from anki.import_export_pb2 import ImportCsvRequest

    path = tmp_path / "deck.csv"
    export_csv(bank, list(bank.questions.values()), path)
    metadata = collection.get_csv_metadata(str(path), None)
    collection.import_csv(ImportCsvRequest(path=str(path), metadata=metadata))
    assert collection.note_count() == len(bank.questions)
    ids = collection.find_notes('"deck:AI Infra Interview"')
    assert len(ids) == len(bank.questions)
    note = collection.get_note(ids[0])
    assert any(t.startswith("topic::") for t in note.tags)


def test_cli_export_prints_what_it_wrote(tmp_path, capsys):
    out = tmp_path / "cli.apkg"
    code = entry(
        ["--bank", str(FIXTURES / "export"), "export", "anki", "-o", str(out), "--topic", "kv"]
    )
    printed = capsys.readouterr().out
    assert code == 0 and out.exists()
    assert "notes" in printed and str(out) in printed


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["export", "anki", "-o", "/no/such/dir/x.apkg"], "output folder does not exist"),
        (
            [
                "export",
                "anki",
                "--company",
                "nvidia",
                "--difficulty",
                "hard",
                "--topic",
                "fa",
                "--tier",
                "T5",
            ],
            "no question matches",
        ),
        (["export", "csv", "-o", "/"], "output path is a folder"),
    ],
)
def test_export_bad_input_is_one_line(capsys, args, message):
    code = entry(args)
    err = capsys.readouterr().err
    assert code != 0 and message in err and err.count("\n") == 1
