"""`quizzer study` and bare `quizzer`: open the Textual app (imported only here)."""

from __future__ import annotations

import click

from quizzer.cli.common import filter_options, make_filters
from quizzer.cli.context import AppContext
from quizzer.cli.launch import launch


@click.command("study")
@filter_options
@click.option(
    "--new",
    "new_limit",
    type=click.IntRange(min=0),
    help="Exactly N new cards in this sitting, even past the daily limit.",
)
@click.option(
    "--extra-new",
    type=click.IntRange(min=1, max=9999),
    default=None,
    help="Raise today's new-card limit by N (custom study), then study.",
)
@click.option("--cram", is_flag=True, help="Review without changing the schedule.")
@click.pass_context
def study_cmd(
    ctx: click.Context,
    new_limit: int | None,
    extra_new: int | None,
    cram: bool,
    **filter_args: object,
) -> None:
    """Review what is due, then new cards, in the terminal app.

    Learning cards come back when due, reviews come before new cards, and new cards come
    breadth first over what interviews ask most (see `quizzer setup`).
    """
    context: AppContext = ctx.find_root().obj
    filters = make_filters(context.bank, **filter_args)  # type: ignore[arg-type]
    launch(
        context,
        home=False,
        filters=filters,
        cram=cram,
        new_limit=new_limit,
        extra_new=extra_new or 0,
    )
