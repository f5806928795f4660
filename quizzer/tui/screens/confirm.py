"""A yes/no question in a dialog: `y` or Enter confirms, `n` or Escape cancels."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


class ConfirmScreen(ModalScreen[bool]):
    """Dismissed with True when the user confirms."""

    BINDINGS = [
        Binding("y,enter", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box", classes="dialog"):
            yield Static(Content(self.question))
            yield Static(Content.from_markup("[b]y[/b] yes    [b]n[/b] no"), classes="hint")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
