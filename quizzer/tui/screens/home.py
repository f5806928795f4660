"""Home: today at a glance, readiness for the target companies, and where to go next."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from quizzer.review.stats import Overview


class HomeScreen(Screen[None]):
    BINDINGS = [
        Binding("s", "app.study", "Study"),
        Binding("c", "app.cram", "Cram"),
        Binding("r", "app.browse", "Browse"),
        Binding("o", "app.settings", "Settings"),
        Binding("question_mark", "app.help", "Keys"),
        Binding("q", "app.quit", "Quit"),
    ]

    def compose(self) -> ComposeResult:
        yield Static("quizzer · AI-infra interview prep", id="title")
        yield Static("Loading...", id="today")
        with Horizontal(id="home-tables"):
            with Vertical():
                yield Static("By topic", classes="section-title")
                yield DataTable(id="topics", cursor_type="row", zebra_stripes=True)
            with Vertical():
                yield Static("Target companies", classes="section-title")
                yield DataTable(id="companies", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#topics", DataTable).add_columns("topic", "due", "new", "total")
        self.query_one("#companies", DataTable).add_columns("company", "due", "new", "ready")

    def on_screen_resume(self) -> None:
        self.refresh_overview()

    @work(thread=True, exclusive=True)
    def refresh_overview(self) -> None:
        try:
            overview = self.app.overview()  # type: ignore[attr-defined]
        except Exception as exc:  # a DB failure is a message, not a crash
            self.app.call_from_thread(
                self.app.notify, f"Could not read progress: {exc}", severity="error", markup=False
            )
            return
        self.app.call_from_thread(self.show, overview)

    def show(self, overview: Overview) -> None:
        self.query_one("#today", Static).update(
            f"Due now [b]{overview.due_now}[/b]   New [b]{overview.new_available}[/b]   "
            f"Reviewed today [b]{overview.reviews_today}[/b]   "
            f"Streak [b]{overview.streak}[/b] day(s)"
        )
        topics = self.query_one("#topics", DataTable)
        topics.clear()
        for row in overview.by_topic:
            topics.add_row(Text(row.name[:34]), row.due, row.new, row.total, key=row.key)
        companies = self.query_one("#companies", DataTable)
        companies.clear()
        ready = {r.company: r for r in overview.readiness}
        for row in overview.by_company:
            share = ready[row.key].share if row.key in ready else 0.0
            companies.add_row(Text(row.name), row.due, row.new, f"{share:.0%}", key=row.key)
