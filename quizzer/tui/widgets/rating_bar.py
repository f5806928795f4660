"""The 1-4 rating bar; each button shows the interval that rating would give."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.events import Resize
from textual.message import Message
from textual.widgets import Button

from quizzer.review.model import Rating, format_interval

VARIANTS = {
    Rating.AGAIN: "error",
    Rating.HARD: "warning",
    Rating.GOOD: "success",
    Rating.EASY: "primary",
}


COMPACT = 64  # below this width a button shows its number and interval only


class RatingBar(Horizontal):
    """Four buttons, Again to Easy, each labelled with the interval it would give."""

    DEFAULT_CSS = """
    RatingBar { height: 3; align-horizontal: center; }
    RatingBar Button { width: 1fr; min-width: 6; margin: 0 1; }
    """

    intervals: dict[Rating, timedelta] | None = None

    @dataclass
    class Rated(Message):
        rating: Rating

    def compose(self) -> ComposeResult:
        for rating in Rating:
            yield Button(
                f"{int(rating)} {rating.label}", id=f"rate-{int(rating)}", variant=VARIANTS[rating]
            )

    def show_intervals(self, intervals: dict[Rating, timedelta] | None) -> None:
        """Label each button with the interval it gives; None (cram) shows none."""
        self.intervals = intervals
        self.relabel()

    def relabel(self) -> None:
        compact = 0 < self.size.width < COMPACT
        for rating in Rating:
            button = self.query_one(f"#rate-{int(rating)}", Button)
            delta = self.intervals.get(rating) if self.intervals else None
            if compact and delta is not None:
                button.label = f"{int(rating)} {format_interval(delta)}"
            elif compact:
                button.label = f"{int(rating)} {rating.label[0]}"
            else:
                shown = f" {format_interval(delta)}" if delta is not None else ""
                button.label = f"{int(rating)} {rating.label}{shown}"

    @on(Resize)
    def _resized(self) -> None:
        self.relabel()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id and event.button.id.startswith("rate-"):
            self.post_message(self.Rated(Rating(int(event.button.id.removeprefix("rate-")))))
