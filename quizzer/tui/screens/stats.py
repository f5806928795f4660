"""The stats screen: the figures of `quizzer stats`, read in a worker and shown scrollable."""

from __future__ import annotations

from rich.console import Group
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from quizzer.review.report import StatsReport


class StatsScreen(Screen[None]):
    """Recall, forecast, streak and readiness, as `quizzer stats` prints them."""

    BINDINGS = [
        Binding("escape,q,t", "app.pop_screen", "Back"),
        Binding("j,down", "scroll('down')", "Down", show=False),
        Binding("k,up", "scroll('up')", "Up", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield Static("Stats", id="stats-title")
        with VerticalScroll(id="stats-body"):
            yield Static("", id="database")
            yield Static("Loading...", id="stats")
        yield Footer()

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True)
    def load(self) -> None:
        from quizzer.db.target import shown_url
        from quizzer.review.report import build
        from quizzer.tui.reporting import read_then_show

        service = self.app.service  # type: ignore[attr-defined]
        url = shown_url(service.database_url)
        read_then_show(self, "read stats", lambda: build(service, (), url), self.show)

    def show(self, report: StatsReport) -> None:
        from quizzer.views.stats import renderables

        bank = self.app.service.bank  # type: ignore[attr-defined]
        database, *rest = renderables(report, bank)  # the database line first, on its own
        self.query_one("#database", Static).update(database)
        self.query_one("#stats", Static).update(Group(*rest))

    def action_scroll(self, direction: str) -> None:
        body = self.query_one("#stats-body", VerticalScroll)
        if direction == "down":
            body.scroll_down()
        else:
            body.scroll_up()
