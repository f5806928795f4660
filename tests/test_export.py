"""Export proven by importing into a fresh collection of the real Anki package."""

from __future__ import annotations

import dataclasses
import html
import re
import sqlite3
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import genanki
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from quizzer.bank.loader import check_bank
from quizzer.cli.main import entry
from quizzer.export import anki as anki_export
from quizzer.export import render
from quizzer.export.anki import export_apkg, note_guid
from quizzer.export.csv_export import export_csv
from quizzer.export.notes import build_note

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


def test_renamed_question_keeps_its_note(bank, collection, tmp_path):
    # GUIDs come from a question's first id, never from its text or its current id.
    assert note_guid("kv-paged") != note_guid("kv-paged-2")
    first = tmp_path / "v1.apkg"
    export_apkg(bank, list(bank.questions.values()), first, timestamp=time.time() - 60)
    import_apkg(collection, first)
    old = bank.questions["e-plain"]
    renamed = dataclasses.replace(old, id="e-plain-renamed", aliases=("e-plain",))
    questions = {k: v for k, v in bank.questions.items() if k != "e-plain"}
    bank2 = dataclasses.replace(bank, questions={**questions, renamed.id: renamed})
    second = tmp_path / "v2.apkg"
    export_apkg(bank2, list(bank2.questions.values()), second)
    import_apkg(collection, second)
    assert collection.note_count() == len(bank.questions)
    note = note_by_id(collection, "e-plain-renamed")
    assert note.guid == note_guid("e-plain")
    assert not collection.find_notes('"Id:e-plain"')


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
    out = tmp_path / ("a-folder-name-long-enough-to-pass-the-terminal-width" * 2) / "cli.apkg"
    out.parent.mkdir()
    code = entry(
        ["--bank", str(FIXTURES / "export"), "export", "anki", "-o", str(out), "--topic", "kv"]
    )
    printed = capsys.readouterr().out
    assert code == 0 and out.exists()
    assert "notes" in printed and str(out) in printed  # on one line, whatever its length


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


# --- The fast paths change no byte: checked against the plain pipeline they replace. ---

_REFERENCE_MD = MarkdownIt("commonmark", {"html": False, "highlight": render._highlight}).enable(
    "table"
)


def reference_markdown(text: str) -> str:
    """render_markdown as it was: every document through one full MarkdownIt instance."""
    math: list[str] = []

    def protect(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return match.group(1)
        if match.group(2) is not None:
            math.append(r"\[" + html.escape(match.group(2).strip()) + r"\]")
        else:
            math.append(r"\(" + html.escape(match.group(3).strip()) + r"\)")
        return render._PLACEHOLDER.format(len(math) - 1)

    rendered = _REFERENCE_MD.render(render._PROTECT.sub(protect, text))
    for index, formula in enumerate(math):
        rendered = rendered.replace(render._PLACEHOLDER.format(index), formula)
    return rendered


def reference_list(items) -> str:
    body = "".join(f"<li>{_REFERENCE_MD.renderInline(item)}</li>" for item in items)
    return f"<ul>{body}</ul>" if items else ""


# Pieces that start or end every block and inline construct, and plain words between them.
_PIECES = st.sampled_from(
    [
        *"abcXYZ019 \t\n\r\0|>#=-_*+~`[]()!<&;:.,?'\"\\/$%@^{}é×",
        "word",
        "    ",
        "\n\n",
        "```",
        "~~~",
        "```python\nx = 1\n",
        "- ",
        "* ",
        "1. ",
        "2) ",
        "# ",
        "> ",
        "---",
        "===",
        "| a | b |\n|---|---|\n",
        "[x]: http://e.com\n",
        "[x]",
        "<b>",
        "&amp;",
        "&#35;",
        "$x$",
        "$$y$$",
        "**",
        "http://e.com",
    ]
)
_MARKDOWN = st.lists(_PIECES, max_size=40).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_MARKDOWN)
def test_render_markdown_matches_the_plain_pipeline(text):
    assert render.render_markdown(text) == reference_markdown(text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_MARKDOWN, max_size=3))
def test_render_list_matches_the_plain_pipeline(items):
    assert render.render_list(items) == reference_list(items)


@pytest.mark.parametrize(
    "text", ["Why?", "What is a KV cache, and why (2x)?", "Say it", "é ok", "a  b", "x/y: 10%"]
)
def test_plain_text_takes_the_shortcut_and_matches(text):
    assert render._PLAIN_PARAGRAPH.fullmatch(text) and render._PLAIN_INLINE.fullmatch(text)
    assert render.render_markdown(text) == reference_markdown(text) == f"<p>{text}</p>\n"
    assert render.render_list([text]) == reference_list([text])


def test_real_bank_renders_as_with_the_plain_pipeline():
    real, _ = check_bank()
    for q in real.questions.values():
        assert render.render_markdown(q.question) == reference_markdown(q.question), q.id
        assert render.render_markdown(q.answer) == reference_markdown(q.answer), q.id
        assert render.render_list(q.key_points) == reference_list(q.key_points), q.id
        assert render.render_list(q.follow_ups) == reference_list(q.follow_ups), q.id


WORKERS_EQUAL_SERIAL = """
import sys
from quizzer.bank.loader import check_bank
from quizzer.export.notes import build_note, build_notes, fork_is_safe

if not fork_is_safe():
    sys.exit("this interpreter has threads, so build_notes would not fork")
real, _ = check_bank()
questions = list(real.questions.values())[:60]
serial = [build_note(real, q) for q in questions]
for workers in (1, 2, 3):
    assert build_notes(real, questions, workers=workers) == serial, workers
print("EQUAL")
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="export forks only on Linux")
def test_notes_built_in_worker_processes_equal_notes_built_in_one():
    """In a fresh interpreter: this one has threads by now, and then nothing forks."""
    out = subprocess.run(
        [sys.executable, "-c", WORKERS_EQUAL_SERIAL], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0 and "EQUAL" in out.stdout, out.stderr[-2000:]


def genanki_apkg(bank, questions, path: Path, timestamp: float) -> None:
    """export_apkg as it was: one genanki.Note per question, genanki writes the package."""
    model = anki_export._model()
    decks = {
        anki_export.ROOT_DECK: genanki.Deck(
            anki_export.deck_id(anki_export.ROOT_DECK), anki_export.ROOT_DECK
        )
    }
    for question in questions:
        note = build_note(bank, question)
        if note.deck not in decks:
            decks[note.deck] = genanki.Deck(anki_export.deck_id(note.deck), note.deck)
        decks[note.deck].add_note(
            genanki.Note(
                model=model,
                fields=list(note.fields),
                tags=list(note.tags),
                guid=genanki.guid_for("quizzer", question.id),
            )
        )
    genanki.Package(list(decks.values())).write_to_file(str(path), timestamp=timestamp)


def package_dump(path: Path, tmp_path: Path) -> tuple[list[str], str, bytes]:
    with zipfile.ZipFile(path) as package:
        names = package.namelist()
        media = package.read("media")
        db = tmp_path / f"{path.stem}.anki2"
        db.write_bytes(package.read("collection.anki2"))
    con = sqlite3.connect(db)
    try:
        return names, "\n".join(con.iterdump()), media
    finally:
        con.close()


def test_apkg_holds_what_genanki_would_write(tmp_path):
    real, _ = check_bank()
    questions = list(real.questions.values())[:80]  # several topic decks
    ours, theirs = tmp_path / "ours.apkg", tmp_path / "theirs.apkg"
    export_apkg(real, questions, ours, timestamp=1_700_000_000.5)
    genanki_apkg(real, questions, theirs, timestamp=1_700_000_000.5)
    assert package_dump(ours, tmp_path) == package_dump(theirs, tmp_path)


def test_note_guid_is_genankis():
    for question_id in ("kv-paged", "e-code", "syn-00001", "é"):
        assert note_guid(question_id) == genanki.guid_for("quizzer", question_id)
