"""Shared CLI helpers: consoles, the per-command context, filter parsing."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import click
from rich.console import Console

from quizzer.bank.model import DIFFICULTIES, Bank, Filters
from quizzer.cli.context import AppContext
from quizzer.errors import UnknownIdError

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)
F = TypeVar("F", bound=Callable[..., Any])


def state(ctx: click.Context) -> AppContext:
    return ctx.find_root().obj  # type: ignore[no-any-return]


def check_ids(kind: str, values: Sequence[str], known: Iterable[str]) -> tuple[str, ...]:
    """Every value must be a known id; the error suggests the nearest one."""
    known = list(known)
    for value in values:
        if value not in known:
            close = difflib.get_close_matches(value, known, n=1, cutoff=0.5)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise UnknownIdError(f"unknown {kind} '{value}'{hint}")
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
    known_tiers = sorted({c.tier for c in bank.companies.values()})
    return Filters(
        companies=check_ids("company", companies, bank.companies),
        topics=check_ids("topic", topics, bank.topics),
        tiers=check_ids("tier", tiers, known_tiers),
        interview=check_ids("interview", [interview], bank.interviews)[0] if interview else None,
        difficulties=tuple(difficulties),
    )
