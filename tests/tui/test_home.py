"""Pilot tests of home: tables that fit every size, Enter studies a row, stats, palette."""

from __future__ import annotations

import pytest
from rich.console import Console
from textual.content import Content
from textual.widgets import DataTable, Static

from quizzer.review.model import Rating
from quizzer.review.report import build
from quizzer.tui.screens.home import HomeScreen
from quizzer.tui.screens.stats import StatsScreen
from quizzer.tui.screens.study import StudyScreen

from .conftest import settle

SIZES = [(80, 24), (100, 30), (200, 50)]


def plain(renderable) -> str:
    console = Console(width=200, record=True)
    console.print(renderable)
    return console.export_text()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_no_number_in_the_home_tables_is_cut(make_app, service, size):
    service.rate("t-kv", Rating.GOOD)  # some numbers that are not 0
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.pause(0.2)
        screen = app.screen
        assert isinstance(screen, HomeScreen) and screen.overview is not None
        overview = screen.overview
        ready = {r.company: f"{r.share:.0%}" for r in overview.readiness}
        expected = {
            "topics": {r.key: [str(r.due), str(r.new), str(r.total)] for r in overview.by_topic},
            "companies": {
                r.key: [str(r.due), str(r.new), str(r.total), ready[r.key]]
                for r in overview.by_company
            },
        }
        for table_id, rows in expected.items():
            table = screen.query_one(f"#{table_id}", DataTable)
            assert rows, table_id
            # Nothing hides past the right edge: no column is scrolled out of sight.
            assert table.virtual_size.width <= table.scrollable_content_region.width
            columns = list(table.columns.values())
            for key, numbers in rows.items():
                cells = table.get_row(key)
                assert [c.plain for c in cells[1:]] == numbers
                for column, cell in zip(columns[1:], cells[1:], strict=True):
                    assert column.width >= len(cell.plain)
                name = cells[0].plain
                assert len(name) <= columns[0].width
        today = Content.from_markup(str(screen.query_one("#today", Static).content)).plain
        assert "Reviewed today 1 · Streak 1 day" in today
        assert "Database: sqlite:///" in str(screen.query_one("#database", Static).content)


@pytest.mark.parametrize(
    ("table_id", "key", "field"), [("topics", "kv", "topics"), ("companies", "xiaomi", "companies")]
)
async def test_enter_on_a_row_studies_it(make_app, service, table_id, key, field):
    app = make_app(targets=["alibaba", "xiaomi"])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(f"#{table_id}", DataTable)
        table.focus()
        table.move_cursor(row=table.get_row_index(key))
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, StudyScreen)
        assert getattr(screen.session.filters, field) == (key,)
        question = service.bank.questions[screen.session.current]
        assert question.topic == key if field == "topics" else key in question.asked_by


async def test_the_stats_screen_shows_what_quizzer_stats_prints(make_app, service):
    service.rate("t-kv", Rating.AGAIN)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        assert isinstance(app.screen, StatsScreen)
        shown = plain(app.screen.query_one("#stats", Static).content)
        printed = build(service, (), "x")
        assert f"Due now {printed.overview.due_now}" in shown
        assert "Reviewed today 1" in shown
        assert "Recalled, last 30 days: 0% of 1 answer" in shown
        assert "Due in the next 7 days: today" in shown
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)


async def test_the_palette_offers_the_apps_commands(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in ("Study", "Cram", "Browse", "Stats", "Settings", "Exercises", "Keys"):
            assert wanted in titles
        stats = next(c for c in app.get_system_commands(app.screen) if c.title == "Stats")
        stats.callback()
        await settle(pilot)
        assert isinstance(app.screen, StatsScreen)
