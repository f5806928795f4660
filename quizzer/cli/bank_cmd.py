"""`quizzer bank validate`."""

from __future__ import annotations

from pathlib import Path

import click

from quizzer.cli.common import console, err_console, state


@click.group("bank")
def bank_group() -> None:
    """Check question banks."""


@bank_group.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.pass_context
def validate(ctx: click.Context, paths: tuple[Path, ...]) -> None:
    """Check banks; report every problem with file:line and question id.

    PATHS are question files or folders; without them, the built-in bank and --bank folders.
    """
    from quizzer.bank.loader import check_bank

    settings = state(ctx).settings
    bank, problems = check_bank(question_paths=paths or None, extra=settings.extra_banks)
    for problem in problems:
        err_console.print(str(problem), markup=False)
    if problems:
        err_console.print(f"{len(problems)} problem(s) found", style="bold red")
        ctx.exit(1)
    counts = bank.counts()
    console.print("bank OK: " + ", ".join(f"{n} {name}" for name, n in counts.items()))
