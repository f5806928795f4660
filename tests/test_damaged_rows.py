"""A damaged card row (bad stored values) is named; every other card keeps working."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

import pytest

from quizzer.cli.main import entry
from quizzer.errors import CorruptCardError
from quizzer.review.model import Rating
from quizzer.tui.app import QuizzerApp
from quizzer.tui.screens.study import StudyScreen

from .conftest import FIXTURES
from .tui.conftest import settle

DAMAGE = {
    "state": "UPDATE cards SET state = 99",
    "stability": "UPDATE cards SET stability = 'abc'",
    "due": "UPDATE cards SET due = 'garbage'",
    "difficulty": "UPDATE cards SET difficulty = NULL",
}


def _damage(db_url: str, qid: str, how: str) -> None:
    path = db_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as c:
        c.execute(DAMAGE[how] + " WHERE question_id = ?", (qid,))


def _rated(service, clock) -> list[str]:
    ids = sorted(service.bank.questions)[:3]
    for qid in ids:
        service.rate(qid, Rating.GOOD)
    clock.advance(timedelta(days=30))  # all due again
    return ids


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_service_names_the_card_and_keeps_the_others(service, clock, db_url, how):
    bad, *good = _rated(service, clock)
    _damage(db_url, bad, how)
    with pytest.raises(CorruptCardError, match=bad):
        service.card(bad)
    with pytest.raises(CorruptCardError, match=bad):
        service.rate(bad, Rating.GOOD)
    cards = service.cards()
    assert bad not in cards and all(g in cards for g in good)
    assert bad in service.damaged
    assert service.rate(good[0], Rating.GOOD).state == "review"


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_stats_and_show_say_which_card(service, clock, db_url, how, capsys):
    bad, *_ = _rated(service, clock)
    _damage(db_url, bad, how)
    extra = ["--db", db_url, "--bank", str(FIXTURES / "small" / "questions.yaml")]
    assert entry([*extra, "stats", "--json"]) == 0
    captured = capsys.readouterr()
    assert bad in json.loads(captured.out)["damaged_cards"]
    assert f"'{bad}' is damaged" in captured.err and "Traceback" not in captured.err
    code = entry([*extra, "show", bad])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert code == 0 or (code == 2 and bad in err and len(err.strip().splitlines()) == 1)


async def test_study_skips_a_damaged_card_and_goes_on(service, clock, db_url):
    bad, *good = _rated(service, clock)
    _damage(db_url, bad, "stability")
    app = QuizzerApp(service, start_study=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, StudyScreen)
        shown = []
        while screen.session.current is not None and len(shown) < 5:
            shown.append(screen.session.current)
            await pilot.press("space", "3")
            await pilot.pause()
        assert bad not in shown and set(good) <= set(shown)
        assert app.is_running
