"""End of a sitting: what was done, why it stopped, what comes next, and custom study."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import Button, Footer, Static

from quizzer.review.model import format_interval, plural
from quizzer.review.session import Summary

if TYPE_CHECKING:
    from quizzer.review.session import StudySession

EXTRA_NEW = 10  # what one press of "+10 new today" adds


def summary_text(summary: Summary, now: datetime) -> str:
    minutes, seconds = divmod(int(summary.seconds), 60)
    if summary.reviewed:
        title = "[b]Session complete[/b]"
    elif summary.limit_reached:
        title = "[b]Today's new cards are done[/b]"
    else:
        title = "[b]Nothing due now[/b]"
    lines = [title + ("  (cram: schedule untouched)" if summary.cram else ""), ""]
    if summary.reviewed:
        lines += [
            f"Cards reviewed   {summary.reviewed}",
            f"Again rate       {summary.again_rate:.0%} ({summary.again} of {summary.reviewed})",
            f"Time spent       {minutes}m {seconds:02d}s",
        ]
    if summary.next_due:
        wait = summary.next_due - now
        when = "now" if wait.total_seconds() <= 0 else f"in {format_interval(wait)}"
        lines.append(f"Next due         {when}")
    if summary.leeches:
        lines.append(f"Leeches met      {escape(', '.join(summary.leeches))}")
    if summary.limit_reached:
        lines += [
            "",
            f"The daily limit of {plural(summary.new_per_day, 'new card')} is reached; "
            f"{plural(summary.new_held_back, 'more new card')} "
            f"{'is' if summary.new_held_back == 1 else 'are'} waiting.",
            f"Press [b]n[/b] for {EXTRA_NEW} more today, or change it with "
            "[b]quizzer config set new-per-day N[/b].",
        ]
    return "\n".join(lines)


class SummaryScreen(Screen[None]):
    """The summary; with the new-card limit reached it offers more new cards today."""

    BINDINGS = [
        Binding("escape,enter", "app.home", "Home"),
        Binding("n", "more_new", f"+{EXTRA_NEW} new today"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(
        self, summary: Summary, now: datetime, session: StudySession | None = None
    ) -> None:
        super().__init__()
        self.summary = summary
        self.now = now
        self.session = session

    def compose(self) -> ComposeResult:
        with Vertical(id="summary-box", classes="dialog"):
            yield Static(summary_text(self.summary, self.now), id="summary")
            if self.summary.limit_reached and self.session is not None:
                yield Button(f"+{EXTRA_NEW} new today", id="more-new", variant="primary")
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "more_new":
            return self.summary.limit_reached and self.session is not None
        return True

    @on(Button.Pressed, "#more-new")
    def _more_new(self) -> None:
        self.action_more_new()

    def action_more_new(self) -> None:
        """Raise today's new-card limit and go on studying in the same sitting."""
        session = self.session
        if session is None or not self.summary.limit_reached:
            return
        from quizzer.tui.reporting import reporting
        from quizzer.tui.screens.study import StudyScreen

        with reporting(self, "add new cards"):
            added = session.add_new(EXTRA_NEW)
            if not added:
                self.notify("No more new cards in this selection")
                return
            self.app.switch_screen(StudyScreen(session, loaded=True))
