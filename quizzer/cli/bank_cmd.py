"""`quizzer bank validate`."""

from __future__ import annotations

from pathlib import Path

import click

from quizzer.cli.common import bank_size, console, err_console, state
from quizzer.cli.suggest import SuggestingGroup
from quizzer.review.model import plural


@click.group("bank", cls=SuggestingGroup)
def bank_group() -> None:
    """Check question banks."""


@bank_group.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.pass_context
def validate(ctx: click.Context, paths: tuple[Path, ...]) -> None:
    """Check banks; report every problem with file:line and question id.

    PATHS are question files or folders; without them, the built-in bank and --bank folders.
    """
    from quizzer.bank.code_blocks import summarise
    from quizzer.bank.loader import check_bank

    settings = state(ctx).settings
    bank, problems = check_bank(question_paths=paths or None, extra=settings.extra_banks)
    for problem in problems:
        err_console.print(str(problem), markup=False)
    if problems:
        err_console.print(f"{plural(len(problems), 'problem')} found", style="bold red")
        ctx.exit(1)
    console.print("bank OK: " + bank_size(bank.counts()))
    console.print(summarise(bank.questions.values()).line(), markup=False)
