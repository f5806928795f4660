"""The plan screen: `p` on home opens it; it says how to make a plan when there is none and
shows the stored plan's forecast and days, the same as `quizzer plan show`."""

from __future__ import annotations

import io
from datetime import timedelta

from rich.console import Console
from textual.widgets import Static

from quizzer.review import plan as P
from quizzer.tui.screens.home import HomeScreen
from quizzer.tui.screens.plan import PlanScreen

from ..conftest import T0
from .conftest import settle


def plain(content: object) -> str:
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(content)
    return console.export_text()


async def test_without_a_plan_it_says_how_to_make_one(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        assert isinstance(app.screen, PlanScreen)
        shown = plain(app.screen.query_one("#plan", Static).content)
        assert "No study plan" in shown and "quizzer plan --company" in shown
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)


async def test_a_stored_plan_shows_its_forecast_and_days(make_app, service):
    target = P.PlanTarget(("alibaba",), (T0 + timedelta(days=10)).date(), 30)
    P.save_target(service, target)
    plan = P.build_plan(service, target)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        assert isinstance(app.screen, PlanScreen)
        shown = plain(app.screen.query_one("#plan", Static).content)
        assert f"Forecast recall on the day: {plan.forecast:.0%}" in shown
        assert f"{len(plan.cards)} of {len(plan.cards)} cards planned" in shown
        first = plan.days[0]
        assert first.day.strftime("%a %d %b") in shown
        assert sum(len(d.new) for d in plan.days) == len(plan.cards)
