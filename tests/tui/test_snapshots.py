"""Snapshots of every screen a session meets, at 80x24, 100x30 and 200x50: home, question,
revealed answer (with code), browse and summary; one revealed answer in the light theme."""

from __future__ import annotations

import pytest

from quizzer.bank.model import Filters

from .conftest import settle

pytest.importorskip("pytest_textual_snapshot")

SIZES = [(80, 24), (100, 30), (200, 50)]
sizes = pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")


async def _settle(pilot) -> None:
    await settle(pilot)
    pin_database_line(pilot.app)


def pin_database_line(app) -> None:
    """The database is a fresh temp file each run: show a fixed name in its place."""
    for line in app.screen.query("#database"):
        line.update("Database: sqlite:///test.db")


@sizes
def test_home(snap_compare, make_app, size):
    assert snap_compare(make_app(), terminal_size=size, run_before=_settle)


@sizes
def test_question(snap_compare, make_app, size):
    assert snap_compare(make_app(start_study=True), terminal_size=size, run_before=_settle)


async def _reveal(pilot) -> None:
    await settle(pilot)
    assert pilot.app.screen.session.current == "t-code"
    await pilot.press("space")
    await settle(pilot)


@sizes
def test_revealed_answer_with_code(snap_compare, make_app, size):
    app = make_app(start_study=True, filters=Filters(topics=("red",), difficulties=("hard",)))
    assert snap_compare(app, terminal_size=size, run_before=_reveal)


@sizes
def test_browse(snap_compare, make_app, size):
    async def browse(pilot) -> None:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        pilot.app.screen.query_one("#search").cursor_blink = False  # a steady cursor
        await pilot.press(*"topic:red")
        await pilot.pause(0.3)  # the search waits for typing to stop
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=browse)


@sizes
def test_summary(snap_compare, make_app, size):
    async def finish(pilot) -> None:
        await settle(pilot)
        for key in ("space", "3", "space", "1", "q"):
            await pilot.press(key)
            await pilot.pause()
        await settle(pilot)

    assert snap_compare(make_app(start_study=True), terminal_size=size, run_before=finish)


def test_revealed_answer_light_theme(snap_compare, make_app):
    async def reveal(pilot) -> None:
        pilot.app.theme = "textual-light"
        await _reveal(pilot)

    app = make_app(start_study=True, filters=Filters(topics=("red",), difficulties=("hard",)))
    assert snap_compare(app, terminal_size=(80, 24), run_before=reveal)
