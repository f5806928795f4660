"""`quizzer study` and bare `quizzer`: open the Textual app (imported only here)."""

from __future__ import annotations

import click

from quizzer.bank.model import Filters
from quizzer.cli.common import filter_options, make_filters
from quizzer.cli.context import AppContext


def launch(
    context: AppContext,
    *,
    home: bool,
    filters: Filters | None = None,
    cram: bool = False,
    new_limit: int | None = None,
) -> None:
    service = context.review_service(quick=True)
    if service.quick is None:
        # A first launch, an older schema or another kind of database: open (create,
        # migrate) it here, where a failure is one line. Otherwise the app opens it in the
        # background once the first card is on screen.
        service.open()
    service.adopt_aliases()
    from quizzer.tui.app import QuizzerApp

    app = QuizzerApp(service, filters=filters, cram=cram, new_limit=new_limit, start_study=not home)
    if not home:
        app.preload_study()
    app.run()


@click.command("study")
@filter_options
@click.option("--new", "new_limit", type=click.IntRange(min=0), help="At most N new cards.")
@click.option("--cram", is_flag=True, help="Review without changing the schedule.")
@click.pass_context
def study_cmd(ctx: click.Context, new_limit: int | None, cram: bool, **filter_args: object) -> None:
    """Review what is due, then new cards, in the terminal app."""
    context: AppContext = ctx.find_root().obj
    filters = make_filters(context.bank, **filter_args)  # type: ignore[arg-type]
    launch(context, home=False, filters=filters, cram=cram, new_limit=new_limit)
