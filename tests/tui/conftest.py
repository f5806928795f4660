from __future__ import annotations

import itertools

import pytest

from quizzer.tui.app import QuizzerApp


@pytest.fixture
def make_app(service):
    def make(**options) -> QuizzerApp:
        ticks = itertools.count(0, 7.5)  # each timer read is 7.5 s later: stable durations
        return QuizzerApp(service, timer=lambda: float(next(ticks)), **options)

    return make


async def settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def open_screen(pilot, key: str, kind: type):
    """From the current screen press `key`; the screen of type `kind` once it is up."""
    await settle(pilot)
    await pilot.press(key)
    await settle(pilot)
    assert isinstance(pilot.app.screen, kind)
    return pilot.app.screen
