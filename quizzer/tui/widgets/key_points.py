"""The card's key points as a checklist: ticked with `t` then the number, or a click."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.events import Click
from textual.message import Message
from textual.widgets import Static


def point_line(number: int, text: str, ticked: bool) -> Content:
    """'☑ 2  the point', the bank's text shown literally."""
    box = "☑" if ticked else "☐"
    return Content.from_markup(f"{box} [b]{number}[/b]  $text", text=text)


class KeyPoint(Static):
    """One point; a click ticks or unticks it."""

    def __init__(self, number: int, text: str) -> None:
        super().__init__(point_line(number, text, False), classes="key-point")
        self.number = number
        self.text = text
        self.ticked = False

    def toggle(self) -> None:
        self.ticked = not self.ticked
        self.set_class(self.ticked, "-ticked")
        self.update(point_line(self.number, self.text, self.ticked))

    @on(Click)
    def _clicked(self) -> None:
        self.toggle()
        self.post_message(KeyPoints.Changed())


class KeyPoints(Vertical):
    """The checklist; posts Changed whenever a point is ticked or unticked."""

    DEFAULT_CSS = """
    KeyPoints { height: auto; margin: 1 0; }
    KeyPoints .key-point { padding: 0 0 0 1; }
    KeyPoints .key-point.-ticked { color: $success; }
    KeyPoints .key-points-title { text-style: bold; }
    """

    @dataclass
    class Changed(Message):
        """A point was ticked or unticked."""

    def __init__(self, points: tuple[str, ...], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.points = points

    def compose(self) -> ComposeResult:
        yield Static("Key points", classes="key-points-title")
        for number, text in enumerate(self.points, start=1):
            yield KeyPoint(number, text)

    @property
    def ticked(self) -> int:
        return sum(1 for point in self.query(KeyPoint) if point.ticked)

    def toggle(self, number: int) -> bool:
        """Tick or untick point `number` (from 1); False when there is no such point."""
        points = list(self.query(KeyPoint))
        if not 1 <= number <= len(points):
            return False
        points[number - 1].toggle()
        self.post_message(self.Changed())
        return True
