"""Pilot tests of the study screen's keys: footer states, escape, key points, help."""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import select
from textual.widgets import Markdown, Static

from quizzer.db.models import ReviewRow
from quizzer.review.model import Rating, format_interval
from quizzer.tui import keys
from quizzer.tui.screens.confirm import ConfirmScreen
from quizzer.tui.screens.help import HelpScreen
from quizzer.tui.screens.study import StudyScreen
from quizzer.tui.screens.summary import SummaryScreen
from quizzer.tui.widgets.key_points import KeyPoint

from .conftest import settle

README = Path(__file__).parents[2] / "README.md"


def footer_actions(screen) -> set[str]:
    """The actions the footer shows now (enabled and meant to be shown)."""
    return {
        binding.action
        for _, binding, enabled, _ in screen.active_bindings.values()
        if enabled and binding.show
    }


def review_count(service) -> int:
    with service.sessions() as s:
        return len(list(s.scalars(select(ReviewRow))))


async def test_the_footer_follows_the_reveal(make_app, service):
    app = make_app(start_study=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        before = footer_actions(screen)
        assert "reveal" in before and {"suspend", "bury"} <= before
        assert not any(a.startswith("rate") for a in before)
        await pilot.press("space")
        await settle(pilot)
        after = footer_actions(screen)
        assert "reveal" not in after and "suspend" not in after
        assert {f"rate({n})" for n in range(1, 5)} <= after
        assert "tick" in after
        preview = service.preview(screen.session.current)
        shown = {b.action: b.description for _, b, _, _ in screen.active_bindings.values()}
        for rating in Rating:  # the footer says what each rating gives, as the buttons do
            wanted = f"{rating.label} {format_interval(preview[rating])}"
            assert shown[f"rate({int(rating)})"] == wanted


async def test_escape_with_a_message_open_only_closes_it(make_app, service):
    app = make_app(start_study=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.notify("something happened")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, StudyScreen)
        assert not app._notifications
        await pilot.press("escape")  # nothing open now: it asks
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, StudyScreen)
        await pilot.press("escape", "y")
        await settle(pilot)
        assert isinstance(app.screen, SummaryScreen)


async def test_q_ends_the_session_at_once(make_app):
    app = make_app(start_study=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await settle(pilot)
        assert isinstance(app.screen, SummaryScreen)


async def test_key_points_are_ticked_by_number_and_by_click(make_app, service):
    app = make_app(start_study=True)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("space")
        await settle(pilot)
        points = list(screen.query(KeyPoint))
        assert len(points) == 3
        line = screen.query_one("#ticked", Static)
        assert "0 of 3" in str(line.content)
        await pilot.press("t", "2")  # ticks point 2, does not rate
        await pilot.pause()
        assert [p.ticked for p in points] == [False, True, False]
        assert "1 of 3" in str(line.content)
        assert review_count(service) == 0
        await pilot.click(points[0])
        await pilot.pause()
        assert [p.ticked for p in points] == [True, True, False]
        assert "2 of 3" in str(line.content)
        await pilot.press("t", "escape")  # never mind: nothing changes
        await pilot.pause()
        assert isinstance(app.screen, StudyScreen)
        assert "2 of 3" in str(line.content)
        await pilot.press("3")  # a number without t rates
        await settle(pilot)
        assert review_count(service) == 1


async def test_follow_ups_and_references_come_after_the_reveal(make_app, small_bank):
    app = make_app(start_study=True)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        while screen.session.current != "t-reduce":
            await pilot.press("s")  # suspend until the card with a reference is up
            await settle(pilot)
        assert not screen.query(".more")
        await pilot.press("space")
        await settle(pilot)
        more = screen.query_one(".more", Markdown)
        reference = small_bank.questions["t-reduce"].references[0]
        assert reference.title in more.source and reference.url in more.source


async def test_help_lists_every_key_and_scrolls(make_app):
    app = make_app(start_study=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text", Static).content)
        for screen_keys in keys.SCREENS.values():
            for key, does in screen_keys:
                assert key in text and does in text
        await pilot.press("pagedown")  # scrolling keeps it open
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, StudyScreen)


def test_the_readme_key_table_is_the_help_screens():
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| key | does |") :].split("\n\n", 1)[0]
    rows = [
        tuple(cell.strip() for cell in line.strip("|").split("|"))
        for line in table.splitlines()[2:]
    ]
    assert rows == keys.STUDY


def test_every_study_binding_is_in_the_key_table():
    described = " ".join(key for key, _ in keys.STUDY)
    for binding in StudyScreen.BINDINGS:
        for key in binding.key.split(","):
            shown = {"space": "space", "question_mark": "?", "escape": "escape"}.get(key, key)
            assert re.search(rf"(^|\W){re.escape(shown)}(\W|$)", described), key
