"""Portable history: export, import into SQLite or PostgreSQL, idempotence, merging."""

from __future__ import annotations

import io
import json
import random
from datetime import UTC, datetime, timedelta

import pytest
from fsrs import Scheduler

from quizzer.cli.main import entry
from quizzer.db.attempts import Attempt, AttemptStore
from quizzer.db.engine import open_database
from quizzer.db.history import HistoryFormatError, export_lines, import_records, read_lines
from quizzer.db.settings import SettingsStore
from quizzer.review.clock import DayBoundary, FixedClock
from quizzer.review.model import Rating
from quizzer.review.service import ReviewService

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _service(url, bank, clock, fuzz=True) -> ReviewService:
    return ReviewService(
        open_database(url),
        bank,
        clock=clock,
        scheduler=Scheduler(enable_fuzzing=fuzz),
        day=DayBoundary(tz=UTC, hour=4),
    )


def _fill(url, bank, seed: int) -> ReviewService:
    """A used database: ratings over weeks, a suspend, a bury, settings and attempts."""
    rng = random.Random(seed)
    clock = FixedClock(T0)
    service = _service(url, bank, clock)
    ids = sorted(bank.questions)
    for _ in range(80):
        service.rate(rng.choice(ids), Rating(rng.randint(1, 4)), duration_ms=rng.randint(1, 9000))
        clock.advance(timedelta(hours=rng.choice([0.1, 1, 20, 49])))
    service.suspend(ids[0])
    service.bury(ids[1])
    SettingsStore(service.sessions).set("workspace", "/home/me/ex")
    SettingsStore(service.sessions).set("exercise.hints.kv-cache", 2)
    AttemptStore(service.sessions).record(
        Attempt("kv-cache", "python", T0, 9.5, "cpu", "failed", 20, 4, 0, 1, {"x": (1.5, "s")})
    )
    return service


def _records(url) -> list[str]:
    return list(export_lines(open_database(url), T0))[1:]  # without the header


def test_round_trip_into_any_database_loses_nothing(tmp_path, small_bank, any_db_url):
    source = f"sqlite:///{tmp_path / 'a.db'}"
    _fill(source, small_bank, seed=1)
    records = list(read_lines(export_lines(open_database(source), T0), "a"))
    report = import_records(open_database(any_db_url), records, Scheduler())
    assert report.reviews_added == 80 and report.cards_recomputed == 0
    assert report.settings_added == 2 and report.attempts_added == 1
    assert _records(any_db_url) == _records(source)


def test_importing_twice_adds_nothing(tmp_path, small_bank, any_db_url):
    source = f"sqlite:///{tmp_path / 'a.db'}"
    _fill(source, small_bank, seed=2)
    text = "\n".join(export_lines(open_database(source), T0))
    import_records(open_database(any_db_url), read_lines(io.StringIO(text), "f"), Scheduler())
    before = _records(any_db_url)
    again = import_records(
        open_database(any_db_url), read_lines(io.StringIO(text), "f"), Scheduler()
    )
    assert (again.reviews_added, again.cards_added, again.settings_added) == (0, 0, 0)
    assert again.attempts_added == 0 and again.reviews_known == 80
    assert _records(any_db_url) == before


def test_merging_two_devices_recomputes_as_if_rated_in_one_place(tmp_path, small_bank):
    """Reviews of one card on two devices, merged by time, give the state that rating
    them all in one place in that order gives."""
    qid = sorted(small_bank.questions)[2]
    laptop, desktop, one = (f"sqlite:///{tmp_path / n}.db" for n in ("l", "d", "one"))
    clocks = {name: FixedClock(T0) for name in ("l", "d", "one")}
    services = {
        "l": _service(laptop, small_bank, clocks["l"]),
        "d": _service(desktop, small_bank, clocks["d"]),
        "one": _service(one, small_bank, clocks["one"]),
    }
    plan = [("l", 3), ("d", 3), ("l", 1), ("d", 4), ("l", 3), ("d", 2), ("l", 3)]
    at = T0
    for device, rating in plan:
        at += timedelta(days=2, hours=3)
        for name in (device, "one"):
            clocks[name].now = at
            services[name].rate(qid, Rating(rating))
    records = read_lines(export_lines(open_database(laptop), T0), "laptop")
    report = import_records(open_database(desktop), records, Scheduler())
    assert report.reviews_added == 4 and report.cards_recomputed == 1
    merged = services["d"].card(qid)
    alone = services["one"].card(qid)
    assert (merged.state, merged.due, merged.reps, merged.lapses) == (
        alone.state,
        alone.due,
        alone.reps,
        alone.lapses,
    )
    assert merged.stability == pytest.approx(alone.stability)
    assert [h.rating for h in services["d"].history(qid)] == [r for _, r in plan]


def test_cli_history_export_import_and_db_copy(tmp_path, small_bank, any_db_url, capsys):
    source = f"sqlite:///{tmp_path / 'a.db'}"
    _fill(source, small_bank, seed=3)
    out = tmp_path / "h.jsonl"
    assert entry(["--db", source, "history", "export", "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert json.loads(lines[0])["format"] == "quizzer-history"
    assert entry(["--db", any_db_url, "db", "copy", "--to", str(tmp_path / "copy.db")]) == 0
    assert entry(["--db", source, "db", "copy", "--to", any_db_url]) == 0
    assert "80 added" in capsys.readouterr().out
    assert _records(any_db_url) == _records(source)
    assert entry(["--db", any_db_url, "history", "import", str(out)]) == 0
    assert "0 added, 80 already there" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "not a quizzer history file"),
        ('{"format": "anki"}\n', "not a quizzer history file"),
        ('{"format": "quizzer-history", "version": 99}\n', "format version 99"),
        ('{"format": "quizzer-history", "version": 1}\n{"type": "review"}\n', "h.jsonl:2"),
        ('{"format": "quizzer-history", "version": 1}\nnot json\n', "h.jsonl:2: bad record"),
    ],
)
def test_a_bad_history_file_is_one_line_and_changes_nothing(tmp_path, capsys, content, message):
    db = f"sqlite:///{tmp_path / 't.db'}"
    path = tmp_path / "h.jsonl"
    path.write_text(content)
    assert entry(["--db", db, "history", "import", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert _records(db) == []


def test_read_lines_rejects_naive_times():
    review = {
        "type": "review",
        "question_id": "q",
        "rating": 3,
        "reviewed_at": "2026-01-01T00:00:00",
        "state_after": 2,
        "due_after": "2026-01-03T00:00:00+00:00",
    }
    lines = ['{"format": "quizzer-history", "version": 1}', json.dumps(review)]
    with pytest.raises(HistoryFormatError, match="reviewed_at has no timezone"):
        list(read_lines(lines, "x"))
