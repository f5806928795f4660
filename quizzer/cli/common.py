"""Shared CLI helpers: consoles, the per-command context, filter parsing."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import click
from rich.console import Console, RenderableType

from quizzer.bank.model import DIFFICULTIES, Bank, Filters
from quizzer.cli.context import AppContext
from quizzer.errors import UnknownIdError, unknown_message
from quizzer.review.model import plural

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)
F = TypeVar("F", bound=Callable[..., Any])
PIPE_WIDTH = 1000  # into a pipe or a file: lines as long as they are, not cut at 80
SINGULAR = {
    "questions": "question",
    "companies": "company",
    "topics": "topic",
    "themes": "theme",
    "interviews": "interview",
    "exercises": "exercise",
}


def state(ctx: click.Context) -> AppContext:
    """The command's shared context, built once by the root group."""
    return ctx.find_root().obj  # type: ignore[no-any-return]


def print_unwrapped(renderable: RenderableType) -> None:
    """Print without wrapping or cutting lines, for output into a pipe or a file."""
    import io

    wide = Console(width=PIPE_WIDTH, file=io.StringIO(), color_system=None, highlight=False)
    wide.print(renderable)
    text = wide.file.getvalue()  # type: ignore[attr-defined]
    click.echo("\n".join(line.rstrip() for line in text.splitlines()))


def counted(n: int, one: str, many: str | None = None) -> str:
    """'1 company', '2 companies': `plural`, with the plural given where it is irregular."""
    if many is None:
        return plural(n, one)
    return f"{n} {one}" if n == 1 else f"{n} {many}"


def bank_size(counts: dict[str, int]) -> str:
    """'530 questions, 65 companies, ...' from `Bank.counts()`-style plural keys."""
    return ", ".join(counted(n, SINGULAR.get(name, name), name) for name, n in counts.items())


def check_ids(kind: str, values: Sequence[str], known: Iterable[str]) -> tuple[str, ...]:
    """Every value must be a known id; the error suggests the nearest one and names the
    command that lists them all."""
    known = list(known)
    for value in values:
        if value not in known:
            raise UnknownIdError(unknown_message(kind, value, known))
    return tuple(values)


def filter_options(func: F) -> F:
    """--company/--topic/--tier/--interview/--difficulty, shared by every selecting command."""
    options = [
        click.option(
            "--company",
            "companies",
            multiple=True,
            metavar="ID",
            help="Asked by this company (repeatable).",
        ),
        click.option(
            "--topic", "topics", multiple=True, metavar="ID", help="In this topic (repeatable)."
        ),
        click.option(
            "--tier",
            "tiers",
            multiple=True,
            metavar="T",
            help="Asked at a company of this tier, e.g. T0.",
        ),
        click.option("--interview", metavar="ID", help="Asked in this interview write-up."),
        click.option(
            "--difficulty", "difficulties", multiple=True, type=click.Choice(DIFFICULTIES)
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def make_filters(
    bank: Bank,
    companies: Sequence[str] = (),
    topics: Sequence[str] = (),
    tiers: Sequence[str] = (),
    interview: str | None = None,
    difficulties: Sequence[str] = (),
) -> Filters:
    """The filter options as a `Filters`; an unknown id is one clear error."""
    known_tiers = sorted({c.tier for c in bank.companies.values()})
    return Filters(
        companies=check_ids("company", companies, bank.companies),
        topics=check_ids("topic", topics, bank.topics),
        tiers=check_ids("tier", tiers, known_tiers),
        interview=check_ids("interview", [interview], bank.interviews)[0] if interview else None,
        difficulties=tuple(difficulties),
    )
