"""End of a session: what was done, and what comes next."""

from __future__ import annotations

from datetime import datetime

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import Footer, Static

from quizzer.review.model import format_interval
from quizzer.review.session import Summary


def summary_text(summary: Summary, now: datetime) -> str:
    minutes, seconds = divmod(int(summary.seconds), 60)
    lines = [
        "[b]Session complete[/b]" + ("  (cram: schedule untouched)" if summary.cram else ""),
        "",
        f"Cards reviewed   {summary.reviewed}",
        f"Again rate       {summary.again_rate:.0%} ({summary.again} of {summary.reviewed})",
        f"Time spent       {minutes}m {seconds:02d}s",
    ]
    if summary.next_due:
        lines.append(f"Next due         in {format_interval(summary.next_due - now)}")
    if summary.leeches:
        lines.append(f"Leeches met      {escape(', '.join(summary.leeches))}")
    return "\n".join(lines)


class SummaryScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,enter", "app.home", "Home"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, summary: Summary, now: datetime) -> None:
        super().__init__()
        self.summary = summary
        self.now = now

    def compose(self) -> ComposeResult:
        with Vertical(id="summary-box", classes="dialog"):
            yield Static(summary_text(self.summary, self.now), id="summary")
        yield Footer()
