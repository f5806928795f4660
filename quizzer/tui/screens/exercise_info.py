"""`e` on a card: the linked exercise's instructions and the command that starts it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from quizzer.paths import exercises_root


def exercise_text(name: str) -> str:
    readme = exercises_root() / name / "README.md"
    command = f"`quizzer exercise {name}` — then `quizzer exercise {name} --check`"
    if readme.is_file():
        return f"{command}\n\n{readme.read_text(encoding='utf-8')}"
    return f"**{name}** is planned: its exercise is not written yet, so there is nothing to run."


class ExerciseScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,e,q", "dismiss", "Close")]

    def __init__(self, name: str) -> None:
        super().__init__()
        self.exercise = name

    def compose(self) -> ComposeResult:
        with Vertical(id="exercise-box", classes="dialog"):
            title = Content(f"Exercise: {self.exercise}   (escape to close)")
            yield Static(title, classes="dialog-title")
            with VerticalScroll():
                yield Markdown(exercise_text(self.exercise))
