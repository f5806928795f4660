"""Pilot tests of browse: debounced search, the preview that follows the row, inline errors."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Markdown, Static

from quizzer.tui.screens.browse import DEBOUNCE_S, BrowseScreen

from .conftest import open_screen, settle


async def open_browse(pilot) -> BrowseScreen:
    return await open_screen(pilot, "r", BrowseScreen)


async def after_debounce(pilot) -> None:
    await pilot.pause(DEBOUNCE_S * 2)
    await settle(pilot)


def highlighted(screen: BrowseScreen) -> str | None:
    table = screen.query_one("#results", DataTable)
    if not table.row_count:
        return None
    return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)


async def test_the_preview_is_the_highlighted_row_after_each_query(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_browse(pilot)
        for text in ("ring", "zzz-nothing", "", "topic:red"):
            screen.query_one("#search").value = ""
            await pilot.press(*text) if text else None
            await after_debounce(pilot)
            shown = highlighted(screen)
            assert screen.preview_id == shown, text
            detail = screen.query_one("#detail-text", Markdown).source
            if shown is None:
                assert text == "zzz-nothing" and "No match" in detail
            else:
                assert detail.startswith(f"## {shown}")
        await pilot.press("down")
        await pilot.pause()
        assert screen.preview_id == highlighted(screen) != screen.shown[0].question.id


async def test_typing_fast_shows_only_the_last_query(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_browse(pilot)
        await pilot.press(*"topic:kv")  # each key restarts the debounce
        await after_debounce(pilot)
        assert [c.question.id for c in screen.shown] == ["t-kv"]
        assert screen.preview_id == "t-kv"


async def test_a_filter_error_waits_for_the_token_and_shows_inline_once(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_browse(pilot)
        error = screen.query_one("#query-error", Static)
        await pilot.press(*"state:sus")
        await after_debounce(pilot)
        assert not error.display  # still typing: state:sus means the states it starts
        assert not app._notifications
        await pilot.press("space")
        await after_debounce(pilot)
        assert error.display and "unknown state 'sus'" in str(error.content)
        assert not app._notifications  # inline, never a stack of toasts


async def test_the_preview_says_suspended_for_a_suspended_card(make_app, service):
    service.suspend("t-kv", True)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_browse(pilot)
        await pilot.press(*"state:suspended")
        await after_debounce(pilot)
        assert [c.question.id for c in screen.shown] == ["t-kv"]
        assert "· suspended*" in screen.query_one("#detail-text", Markdown).source
        table = screen.query_one("#results", DataTable)
        assert table.get_row("t-kv")[2].plain == "suspended"


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (200, 50)])
async def test_every_column_fits_beside_a_scrollbar(make_app, size):
    """The columns leave room for the vertical scrollbar a full bank shows, at every size."""
    app = make_app()
    async with app.run_test(size=size) as pilot:
        screen = await open_browse(pilot)
        table = screen.query_one("#results", DataTable)
        needed = sum(column.get_render_width(table) for column in table.columns.values())
        assert "lapses" in table.columns or size[0] < 100
        assert needed + table.styles.scrollbar_size_vertical <= table.region.width
