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
