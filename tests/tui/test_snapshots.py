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


CHART_SIZES = [(80, 24), (120, 40)]


async def _stats_with_history(pilot) -> None:
    await settle(pilot)
    await pilot.press("t")
    await settle(pilot)
    pin_database_line(pilot.app)
    body = pilot.app.screen.query_one("#stats-body")
    body.scroll_to(y=4, animate=False)  # past the summary, to the heatmap and forecast
    await pilot.pause()


@pytest.mark.parametrize("size", CHART_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_stats_charts(snap_compare, make_app, service, clock, size):
    """The stats screen's charts over four weeks of fixed-clock study."""
    from datetime import timedelta

    from quizzer.review.model import Rating

    now = clock.now
    clock.now = now - timedelta(days=28)
    while clock.now < now:
        for qid in service.queue()[:4]:
            service.rate(qid, Rating.GOOD)
        clock.advance(timedelta(days=1))
    clock.now = now
    assert snap_compare(make_app(), terminal_size=size, run_before=_stats_with_history)
