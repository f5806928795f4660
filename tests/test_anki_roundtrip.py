"""The schedule goes to Anki and Anki's reviews come back, through the real `anki` package."""

from __future__ import annotations

import shutil
import zipfile
from datetime import timedelta

import pytest
from fsrs import Scheduler

from quizzer.db.engine import open_database
from quizzer.db.history import import_records
from quizzer.db.replay import replay
from quizzer.review.clock import DayBoundary, FixedClock, system_clock
from quizzer.review.model import Rating
from quizzer.review.service import ReviewService

anki_collection = pytest.importorskip("anki.collection")

from quizzer.export.anki import note_guid  # noqa: E402
from quizzer.export.anki_import import AnkiFileError, read_anki_reviews  # noqa: E402
from quizzer.export.anki_schedule import export_with_schedule, read_schedule  # noqa: E402

DAY = DayBoundary(hour=4)


def _service(url, bank, clock) -> ReviewService:
    return ReviewService(open_database(url), bank, clock=clock, scheduler=Scheduler(), day=DAY)


@pytest.fixture
def studied(tmp_path, small_bank):
    """A database whose cards were studied over the last weeks, up to now."""
    url = f"sqlite:///{tmp_path / 'q.db'}"
    now = system_clock()
    clock = FixedClock(now - timedelta(days=70))
    service = _service(url, small_bank, clock)
    ids = sorted(small_bank.questions)
    for step, qid in enumerate(ids * 4):
        service.rate(qid, Rating(3 if step % 5 else 1))
        clock.advance(timedelta(days=2, hours=step % 7))
    clock.now = now - timedelta(minutes=3)
    service.rate(ids[0], Rating.AGAIN)  # a learning step due in minutes
    clock.now = now
    service.suspend(ids[1])
    return url, service


def _export(tmp_path, service) -> tuple:
    now = service.clock()
    bank = service.bank
    cards, reviews = read_schedule(service.sessions, bank, now)
    out = tmp_path / "deck.apkg"
    export_with_schedule(
        bank, list(bank.questions.values()), cards, reviews, out, now=now, day=DAY, retention=0.9
    )
    return out, cards, reviews


def _open(tmp_path, name="phone"):
    folder = tmp_path / name
    folder.mkdir()
    return anki_collection.Collection(str(folder / "collection.anki2"))


def _import_with_schedule(col, path) -> None:
    from anki.import_export_pb2 import ImportAnkiPackageOptions, ImportAnkiPackageRequest

    col.import_anki_package(
        ImportAnkiPackageRequest(
            package_path=str(path),
            options=ImportAnkiPackageOptions(with_scheduling=True, with_deck_configs=True),
        )
    )


def _anki_cards(col) -> dict[str, object]:
    rows = col.db.all("SELECT c.id, n.guid FROM cards c JOIN notes n ON n.id = c.nid")
    return {guid: col.get_card(cid) for cid, guid in rows}


def test_anki_continues_where_quizzer_is(tmp_path, studied):
    _url, service = studied
    out, cards, reviews = _export(tmp_path, service)
    col = _open(tmp_path)
    try:
        _import_with_schedule(col, out)
        anki = _anki_cards(col)
        now = service.clock()
        for card in cards:
            got = anki[note_guid(service.bank.questions[card.question_id].first_id)]
            assert got.memory_state.stability == pytest.approx(
                card.stability, abs=1e-3
            )  # Anki keeps 3 decimals
            assert got.memory_state.difficulty == pytest.approx(card.difficulty, abs=1e-3)
            assert got.reps == card.reps and got.lapses == card.lapses
            if card.suspended:
                assert got.queue == -1
            elif card.state == 2:
                days = round(
                    (DAY.start_of_day(card.due) - DAY.start_of_day(now)) / timedelta(days=1)
                )
                assert got.type == 2 and got.due - col.sched.today == days
                interval = round(
                    (DAY.start_of_day(card.due) - DAY.start_of_day(card.last_review))
                    / timedelta(days=1)
                )
                assert got.ivl == max(1, interval)
            else:
                assert got.type in (1, 3) and got.queue == 1
                assert got.due == int(card.due.timestamp())
        logged = col.db.scalar("SELECT count() FROM revlog")
        assert logged == len(reviews)
    finally:
        col.close()


def _answer_in_anki(tmp_path, deck, ratings: list[int], colpkg: bool = False):
    """Open the deck in a fresh collection, answer cards with Anki's own scheduler, and
    export with scheduling, as a user does on the phone."""
    from anki.generic_pb2 import Empty
    from anki.import_export_pb2 import ExportAnkiPackageOptions, ExportLimit

    col = _open(tmp_path, "anki-side")
    try:
        _import_with_schedule(col, deck)
        answered = []
        for ease in ratings:
            cids = col.find_cards("-is:suspended")
            card = col.get_card(sorted(cids)[len(answered) % len(cids)])
            card.start_timer()
            col.sched.answerCard(card, ease)
            answered.append((col.get_note(card.nid).guid, ease))
        out = tmp_path / ("back.colpkg" if colpkg else "back.apkg")
        if colpkg:
            col.export_collection_package(str(out), include_media=False, legacy=False)
        else:
            col.export_anki_package(
                out_path=str(out),
                options=ExportAnkiPackageOptions(with_scheduling=True, with_deck_configs=True),
                limit=ExportLimit(whole_collection=Empty()),
            )
        return out, answered
    finally:
        if not colpkg:
            col.close()


@pytest.mark.parametrize("colpkg", [False, True], ids=["apkg", "colpkg"])
def test_reviews_made_in_anki_come_back_once_in_order(tmp_path, studied, colpkg):
    _url, service = studied
    deck, _, _ = _export(tmp_path, service)
    before = {q: len(service.history(q)) for q in service.bank.questions}
    back, answered = _answer_in_anki(tmp_path, deck, [3, 3, 1, 4], colpkg=colpkg)
    found = read_anki_reviews(back, service.bank)
    assert found.foreign_notes == 0 and found.quizzer_notes == len(service.bank.questions)
    report = import_records(service.sessions, found.records, service.scheduler)
    assert report.reviews_added == len(answered)  # quizzer's own reviews are known already
    by_guid = {note_guid(q.first_id): q.id for q in service.bank.questions.values()}
    for guid, _ in answered:
        qid = by_guid[guid]
        history = service.history(qid)
        assert len(history) == before[qid] + sum(1 for g, _ in answered if g == guid)
        assert [h.reviewed_at for h in history] == sorted(h.reviewed_at for h in history)
    # the card's state is the replay of its merged history
    qid = by_guid[answered[-1][0]]
    history = service.history(qid)
    assert history[-1].rating == Rating(answered[-1][1])
    expected, _, _ = replay(
        qid, [(h.reviewed_at, int(h.rating)) for h in history], service.scheduler
    )
    card = service.card(qid)
    assert (card.last_review, card.due) == (expected.last_review, expected.due)
    assert card.stability == pytest.approx(expected.stability)
    again = import_records(
        service.sessions, read_anki_reviews(back, service.bank).records, service.scheduler
    )
    assert again.reviews_added == 0 and again.reviews_known == report.reviews_known + len(answered)


def test_bad_files_are_one_line_and_change_nothing(tmp_path, studied):
    _url, service = studied
    deck, _, _ = _export(tmp_path, service)
    truncated = tmp_path / "cut.apkg"
    truncated.write_bytes(deck.read_bytes()[: deck.stat().st_size // 2])
    with pytest.raises(AnkiFileError, match="not an Anki package"):
        read_anki_reviews(truncated, service.bank)
    other = tmp_path / "other.apkg"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("hello.txt", "not anki")
    with pytest.raises(AnkiFileError, match="no collection"):
        read_anki_reviews(other, service.bank)
    text = tmp_path / "notes.txt"
    shutil.copy(deck, text)
    with pytest.raises(AnkiFileError, match=r"\.apkg or \.colpkg"):
        read_anki_reviews(text, service.bank)


def test_foreign_notes_are_reported_and_left_alone(tmp_path, studied):
    _url, service = studied
    deck, _, _ = _export(tmp_path, service)
    from anki.generic_pb2 import Empty
    from anki.import_export_pb2 import ExportAnkiPackageOptions, ExportLimit

    col = _open(tmp_path, "mixed")
    try:
        _import_with_schedule(col, deck)
        basic = col.models.by_name("Basic")
        note = col.new_note(basic)
        note["Front"], note["Back"] = "capital of France?", "Paris"
        col.add_note(note, col.decks.id("Default"))
        card = note.cards()[0]
        card.start_timer()
        col.sched.answerCard(card, 3)
        mixed = tmp_path / "mixed.apkg"
        col.export_anki_package(
            out_path=str(mixed),
            options=ExportAnkiPackageOptions(with_scheduling=True),
            limit=ExportLimit(whole_collection=Empty()),
        )
    finally:
        col.close()
    found = read_anki_reviews(mixed, service.bank)
    assert found.foreign_notes == 1
    assert all(r["question_id"] in service.bank.questions for r in found.records)
    report = import_records(service.sessions, found.records, service.scheduler)
    assert report.reviews_added == 0  # the only new answer was on the foreign note


def test_cli_export_with_schedule_and_import(tmp_path, capsys):
    from quizzer.cli.main import entry

    db = tmp_path / "q.db"
    deck = tmp_path / "deck.apkg"
    assert (
        entry(
            ["--db", str(db), "export", "anki", "-o", str(deck), "--with-schedule", "--topic", "kv"]
        )
        == 0
    )
    assert "0 with their schedule" in " ".join(capsys.readouterr().out.split())
    assert entry(["--db", str(db), "import", "anki", str(deck)]) == 0
    assert "reviews: 0 added" in " ".join(capsys.readouterr().out.split())
    junk = tmp_path / "junk.apkg"
    junk.write_bytes(b"PK\x03\x04 not really")
    assert entry(["--db", str(db), "import", "anki", str(junk)]) == 2
    err = capsys.readouterr().err
    assert "not an Anki package" in err and "Traceback" not in err


def test_reviews_sharing_a_millisecond_come_back_as_known(tmp_path, small_bank):
    """Anki's log needs a unique millisecond per answer; the export moves a clash by a
    millisecond, and the import still recognises both reviews."""
    url = f"sqlite:///{tmp_path / 'q.db'}"
    clock = FixedClock(system_clock() - timedelta(days=1))
    service = _service(url, small_bank, clock)
    for qid in sorted(small_bank.questions)[:3]:
        service.rate(qid, Rating.GOOD)  # all at the same instant
    deck, _, reviews = _export(tmp_path, service)
    assert len(reviews) == 3
    found = read_anki_reviews(deck, small_bank)
    assert len({r["reviewed_at"] for r in found.records}) == 3  # moved apart in Anki
    report = import_records(service.sessions, found.records, service.scheduler)
    assert (report.reviews_added, report.reviews_known) == (0, 3)
