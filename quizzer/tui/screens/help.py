"""`?`: every key, in one dialog."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS = """\
[b]Study[/b]
  space / enter   reveal the answer
  1 2 3 4         rate Again / Hard / Good / Easy (after reveal)
  u               undo the last rating
  s               suspend this card
  b               bury this card until tomorrow
  e               the linked coding exercise
  q / escape      end the session (everything rated is saved)

[b]Home[/b]
  s  study   c  cram   r  browse   q  quit

[b]Browse[/b]
  type to search; filters: topic:kv company:bytedance tier:T0
  state:new|learning|review|relearning|suspended|leech  diff:easy|medium|hard
  ctrl+s  suspend / unsuspend   ctrl+x  reset schedule   escape  back

Press any key to close."""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box", classes="dialog"):
            yield Static(KEYS, id="help-text")

    def on_key(self) -> None:
        self.dismiss()
