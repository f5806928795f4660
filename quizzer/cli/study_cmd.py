"""`quizzer study` and bare `quizzer`: open the Textual app (imported only here)."""

from __future__ import annotations

import click

from quizzer.cli.context import AppContext
from quizzer.errors import QuizzerError


def launch(context: AppContext, *, home: bool, **options: object) -> None:
    raise QuizzerError("the study app is not available in this build")


def register(group: click.Group) -> None:
    @group.command("study")
    @click.pass_context
    def study(ctx: click.Context) -> None:
        """Review what is due, then new cards, in the terminal app."""
        launch(ctx.find_root().obj, home=False)
