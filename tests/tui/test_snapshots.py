"""A few 80x24 snapshots: home, question, revealed answer with code, browse, summary."""

from __future__ import annotations

import pytest

from quizzer.bank.model import Filters

from .conftest import settle

pytest.importorskip("pytest_textual_snapshot")


async def _settle(pilot) -> None:
    await settle(pilot)
    pin_database_line(pilot.app)


def pin_database_line(app) -> None:
    """The database is a fresh temp file each run: show a fixed name in its place."""
    for line in app.screen.query("#database"):
        line.update("Database: sqlite:///test.db")


def test_home(snap_compare, make_app):
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=_settle)


def test_question(snap_compare, make_app):
    assert snap_compare(make_app(start_study=True), terminal_size=(80, 24), run_before=_settle)


def test_revealed_answer_with_code(snap_compare, make_app):
    async def reveal(pilot) -> None:
        await settle(pilot)
        assert pilot.app.screen.session.current == "t-code"
        await pilot.press("space")
        await settle(pilot)

    app = make_app(start_study=True, filters=Filters(topics=("red",), difficulties=("hard",)))
    assert snap_compare(app, terminal_size=(80, 24), run_before=reveal)


def test_browse(snap_compare, make_app):
    async def browse(pilot) -> None:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press(*"topic:kv")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=browse)


def test_summary(snap_compare, make_app):
    async def finish(pilot) -> None:
        await settle(pilot)
        for key in ("space", "3", "space", "1", "q"):
            await pilot.press(key)
            await pilot.pause()
        await settle(pilot)

    assert snap_compare(make_app(start_study=True), terminal_size=(80, 24), run_before=finish)


def test_revealed_answer_light_theme(snap_compare, make_app):
    async def reveal(pilot) -> None:
        pilot.app.theme = "textual-light"
        await settle(pilot)
        await pilot.press("space")
        await settle(pilot)

    app = make_app(start_study=True, filters=Filters(topics=("red",), difficulties=("hard",)))
    assert snap_compare(app, terminal_size=(80, 24), run_before=reveal)
