"""The plan screen: the study plan to the interview date, as `quizzer plan show` prints it."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from quizzer.review.plan import Plan

NO_PLAN = (
    "No study plan. Make one from the shell:\n\n"
    "  quizzer plan --company ID --date YYYY-MM-DD [--minutes-per-day N]\n\n"
    "While a plan runs, study takes each day's new cards from it."
)


@dataclass(frozen=True, slots=True)
class PlanRead:
    """What the worker read: the plan, or why there is none."""

    plan: Plan | None
    message: str = ""


class PlanScreen(Screen[None]):
    """The plan's forecast and its days, derived afresh each time the screen opens."""

    BINDINGS = [
        Binding("escape,q,p", "app.pop_screen", "Back"),
        Binding("j,down", "scroll('down')", "Down", show=False),
        Binding("k,up", "scroll('up')", "Up", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield Static("Study plan", id="plan-title")
        with VerticalScroll(id="plan-body"):
            yield Static("Loading...", id="plan")
        yield Footer()

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True)
    def load(self) -> None:
        from quizzer.tui.reporting import read_then_show

        service = self.app.service  # type: ignore[attr-defined]
        read_then_show(self, "read the plan", lambda: read_plan(service), self.show)

    def show(self, read: PlanRead) -> None:
        body = self.query_one("#plan", Static)
        if read.plan is None:
            body.update(read.message)
            return
        from quizzer.views.plan import renderables

        bank = self.app.service.bank  # type: ignore[attr-defined]
        body.update(Group(*renderables(read.plan, bank)))

    def action_scroll(self, direction: str) -> None:
        body = self.query_one("#plan-body", VerticalScroll)
        if direction == "down":
            body.scroll_down()
        else:
            body.scroll_up()


def read_plan(service: object) -> PlanRead:
    """The stored plan derived now, or the message to show instead."""
    from quizzer.review.plan import build_plan, local_today, stored_target

    target = stored_target(service)  # type: ignore[arg-type]
    if target is None:
        return PlanRead(None, NO_PLAN)
    if target.date <= local_today(service):  # type: ignore[arg-type]
        return PlanRead(None, f"The plan to {target.date} has ended: quizzer plan clear")
    return PlanRead(build_plan(service, target))  # type: ignore[arg-type]
