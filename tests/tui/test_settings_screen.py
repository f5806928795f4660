"""Pilot tests of the settings screen and the first-run setup: what they store, and when."""

from __future__ import annotations

from sqlalchemy import select
from textual.widgets import Input, RadioButton, RadioSet, SelectionList, Static

from quizzer.db.models import SettingRow
from quizzer.review.settings import PREFIX
from quizzer.tui.screens.confirm import ConfirmScreen
from quizzer.tui.screens.home import HomeScreen
from quizzer.tui.screens.settings import SettingsScreen
from quizzer.tui.screens.study import StudyScreen

from .conftest import open_screen, settle


def stored(service) -> dict[str, str]:
    with service.sessions() as s:
        rows = s.scalars(select(SettingRow).where(SettingRow.key.startswith(PREFIX)))
        return {row.key.removeprefix(PREFIX): row.value for row in rows}


async def open_settings(pilot) -> SettingsScreen:
    """From home, `o`; the settings screen once it is up."""
    return await open_screen(pilot, "o", SettingsScreen)


async def test_first_run_setup_over_study_reorders_the_queue(make_app, service):
    assert service.needs_setup()
    app = make_app(start_study=True, first_run=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SettingsScreen)
        assert screen.query_one("#settings-title", Static).content.startswith("Welcome")
        assert not screen.query("#set-new-per-day")  # the first run asks only three things
        screen.query_one("#focus", SelectionList).select("kv")
        screen.query_one("#companies", SelectionList).select("nvidia")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, StudyScreen)
        assert app.screen.session.current is not None
        first = service.bank.questions[app.screen.session.current]
        assert first.topic == "kv"  # the focus topic comes first
    assert stored(service) == {"focus": '["kv"]', "companies": '["nvidia"]'}
    assert not service.needs_setup()
    assert service.settings.focus == ("kv",)


async def test_skipping_the_setup_keeps_defaults_and_does_not_ask_again(make_app, service):
    app = make_app(first_run=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SettingsScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
    assert not service.needs_setup()
    assert service.settings.companies == () and service.settings.focus == ()


async def test_a_bad_value_is_shown_under_its_field_and_nothing_is_saved(make_app, service):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_settings(pilot)
        screen.query_one("#set-new-per-day", Input).value = "lots"
        screen.query_one("#set-learn-ahead", Input).value = "5m"
        await pilot.press("ctrl+s")
        await pilot.pause()
        error = screen.query_one("#error-new-per-day", Static)
        assert error.display and "not a whole number" in str(error.content)
        assert not screen.query_one("#error-learn-ahead", Static).display
        assert app.screen is screen  # still open, nothing stored
        assert stored(service) == {}
        screen.query_one("#set-new-per-day", Input).value = "35"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
    assert stored(service) == {"new-per-day": "35", "learn-ahead": "300.0"}
    assert service.settings.new_per_day == 35


async def test_leaving_with_unsaved_changes_asks_first(make_app, service):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_settings(pilot)
        level = screen.query_one("#level", RadioSet)
        level.query(RadioButton).last().value = True  # "experienced"
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # keep editing
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
    assert service.settings.level == "experienced"


async def test_leaving_an_unchanged_form_stores_nothing(make_app, service):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_settings(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
    assert stored(service) == {}
    assert service.needs_setup()
