"""`quizzer config` and `quizzer setup`: settings kept in the database, bad values refused."""

from __future__ import annotations

import json

import pytest

from quizzer.bank.loader import load_bank
from quizzer.bank.order import asked_count
from quizzer.cli.main import entry


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = entry(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def db(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'config.db'}"


def test_set_get_and_show(capsys, db):
    assert run(capsys, "--db", db, "config", "set", "new-per-day", "7")[1] == "new-per-day = 7\n"
    code, out, _ = run(capsys, "--db", db, "config", "set", "learning-steps", "2m", "15m")
    assert code == 0 and out == "learning-steps = 2m 15m\n"
    assert run(capsys, "--db", db, "config", "get", "learning-steps")[1] == "2m 15m\n"
    code, out, _ = run(capsys, "--db", db, "config", "show", "--json")
    shown = json.loads(out)
    assert shown["new-per-day"] == 7 and shown["learning-steps"] == ["2m", "15m"]
    assert shown["desired-retention"] == 0.9  # untouched: the default
    code, out, _ = run(capsys, "--db", db, "config")
    assert code == 0 and "learn-ahead" in out and "Database: " in out


def test_the_limit_set_is_the_limit_used(capsys, db):
    run(capsys, "--db", db, "config", "set", "new-per-day", "4")
    code, out, _ = run(capsys, "--db", db, "list", "--due", "--json")
    assert code == 0 and len(json.loads(out)) == 4
    run(capsys, "--db", db, "config", "reset", "new-per-day")
    assert len(json.loads(run(capsys, "--db", db, "list", "--due", "--json")[1])) == 20


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("set", "desired-retention", "1.5"), "out of range (0.70 to 0.99)"),
        (("set", "new-per-day", "lots"), "'lots' is not a whole number"),
        (("set", "learn-ahead", "soon"), "is not a duration"),
        (("set", "companies", "nvidai"), "did you mean 'nvidia'"),
        (("set", "focus", "kvv"), "unknown topic 'kvv'"),
        (("set", "level", "senior"), "unknown level 'senior'"),
        (("get", "colour"), "unknown setting 'colour'"),
    ],
)
def test_bad_values_are_one_line_and_change_nothing(capsys, db, args, message):
    run(capsys, "--db", db, "config", "set", "new-per-day", "9")
    code, out, err = run(capsys, "--db", db, "config", *args)
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and message in err
    assert run(capsys, "--db", db, "config", "get", "new-per-day")[1] == "9\n"


def test_setup_with_options_steers_the_first_cards(capsys, db):
    code, out, _ = run(
        capsys, "--db", db, "setup", "--company", "nvidia", "--level", "intern", "--focus", "kv"
    )
    assert code == 0 and "companies: nvidia" in out and "focus: kv" in out
    rows = json.loads(run(capsys, "--db", db, "list", "--due", "--json")[1])
    in_focus = sum(q.topic == "kv" for q in load_bank().questions.values())
    assert 0 < in_focus < len(rows)
    assert [r["topic"] for r in rows[:in_focus]] == ["kv"] * in_focus  # the focus first
    assert all(r["asked_by"].get("nvidia") for r in rows[in_focus:])  # then the company


def test_setup_asks_when_given_no_options(capsys, db, monkeypatch):
    answers = iter(["bytedance, nvidia", "new-grad", ""])
    monkeypatch.setattr("click.prompt", lambda *a, **k: next(answers))
    code, out, _ = run(capsys, "--db", db, "setup")
    assert code == 0 and "companies: bytedance, nvidia" in out and "level: new-grad" in out
    assert "focus: none" in out


def test_list_with_a_company_sorts_by_that_companys_count(capsys):
    bank = load_bank()
    code, out, _ = run(capsys, "list", "--company", "bytedance", "--sort", "asked", "--json")
    ids = [r["id"] for r in json.loads(out)]
    counts = [asked_count(bank, bank.questions[q], ["bytedance"]) for q in ids]
    assert code == 0 and counts == sorted(counts, reverse=True)
    globally = [bank.questions[q].times_asked for q in ids]
    assert globally != sorted(globally, reverse=True)  # a different order from the global one
