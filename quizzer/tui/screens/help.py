"""`?`: every key of every screen, in one scrollable dialog."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.events import Key
from textual.screen import ModalScreen
from textual.widgets import Static

from quizzer.tui.keys import help_text


class HelpScreen(ModalScreen[None]):
    """The key table; scroll keys scroll it, any other key closes it."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close")]
    SCROLL_KEYS = ("up", "down", "pageup", "pagedown", "home", "end")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box", classes="dialog"):
            yield Static(Content.from_markup(help_text()), id="help-text")

    def on_key(self, event: Key) -> None:
        if event.key not in self.SCROLL_KEYS:
            self.dismiss()
