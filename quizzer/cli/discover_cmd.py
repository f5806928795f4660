"""`quizzer topics`, `quizzer companies`, `quizzer interviews`: the ids the filters take.

Bank only: none of them opens the database. Each prints a table, or JSON with `--json`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

import click
from rich.table import Table
from rich.text import Text

from quizzer.bank.model import Bank, Company, Interview
from quizzer.cli.common import check_ids, console, counted, print_unwrapped, state
from quizzer.review.model import plural

MIXED_TIER = "mixed"  # the pseudo-company pooling unattributed question banks
NOT_ONE = "(not one company)"
NUMERIC = ("cards", "write-ups", "themes")

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")


def _emit(
    rows: Sequence[dict[str, object]],
    columns: Sequence[str],
    as_json: bool,
    notes: Sequence[str],
    give_way: str = "name",
) -> None:
    """Rows as JSON, or as a table of their values under `columns`, then dim notes.

    On a terminal too narrow for every row the `give_way` column is cut short; into a pipe
    or a file every row is printed whole.
    """
    if as_json:
        click.echo(json.dumps(list(rows), indent=2))
        return
    table = Table(box=None, pad_edge=False, header_style="bold", padding=(0, 1, 0, 0))
    cells = [[_cell(value) for value in row.values()] for row in rows]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    others = sum(w for c, w in zip(columns, widths, strict=True) if c != give_way)
    terminal = console.is_terminal
    room = max(8, console.width - others - len(columns) + 1) if terminal else None
    for column, width in zip(columns, widths, strict=True):
        if column == give_way:
            table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=room)
        else:
            justify = "right" if column in NUMERIC else "left"
            table.add_column(column, no_wrap=True, min_width=width, justify=justify)
    for row in cells:
        table.add_row(*(Text(cell) for cell in row[: len(columns)]))
    if terminal:
        console.print(table)
    else:
        print_unwrapped(table)
    for note in notes:
        console.print(note, style="dim", markup=False, soft_wrap=True)


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


def topic_rows(bank: Bank) -> list[dict[str, object]]:
    """Every topic: core before adjacent, then most asked first."""
    cards = Counter(q.topic for q in bank.questions.values())
    topics = sorted(bank.topics.values(), key=lambda t: (t.track != "core", -t.interviews, t.id))
    return [
        {
            "id": t.id,
            "name": t.name,
            "track": t.track,
            "cards": cards[t.id],
            "interviews": t.interviews,
        }
        for t in topics
    ]


@click.command("topics")
@json_option
@click.pass_context
def topics_cmd(ctx: click.Context, as_json: bool) -> None:
    """List the topics: their cards and the write-ups that asked them."""
    rows = topic_rows(state(ctx).bank)
    notes = [
        f"{plural(len(rows), 'topic')}; write-ups: interview write-ups that asked one of "
        "the topic's themes",
        "Study one with: quizzer study --topic ID",
    ]
    _emit(rows, ("id", "name", "track", "cards", "write-ups"), as_json, notes)


def _company_order(company: Company) -> tuple[bool, int, str]:
    return (company.tier == MIXED_TIER, -company.interviews, company.id)


def company_rows(bank: Bank) -> list[dict[str, object]]:
    """Every company, most write-ups first; the mixed pseudo-company last."""
    cards: Counter[str] = Counter()
    for question in bank.questions.values():
        cards.update(question.asked_by.keys())
    return [
        {
            "id": c.id,
            "name": c.name,
            "tier": c.tier,
            "interviews": c.interviews,
            "cards": cards[c.id],
            "one_company": c.tier != MIXED_TIER,
        }
        for c in sorted(bank.companies.values(), key=_company_order)
    ]


@click.command("companies")
@json_option
@click.pass_context
def companies_cmd(ctx: click.Context, as_json: bool) -> None:
    """List the companies: their tier, write-ups, and the cards they asked."""
    rows = company_rows(state(ctx).bank)
    shown = [
        row if row["one_company"] else {**row, "name": f"{row['name']} {NOT_ONE}"} for row in rows
    ]
    notes = [
        f"{counted(len(rows), 'company', 'companies')}; "
        "cards: questions whose themes one of its write-ups asked",
        f"'{MIXED_TIER}' pools question banks whose company is not stated: not one company",
        "Study one with: quizzer study --company ID",
    ]
    _emit(
        rows if as_json else shown,
        ("id", "name", "tier", "write-ups", "cards"),
        as_json,
        notes,
    )


def _cards_of(interview: Interview, by_theme: dict[str, set[str]]) -> int:
    asked: set[str] = set()
    for theme in interview.themes:
        asked |= by_theme.get(theme, set())
    return len(asked)


def interview_rows(bank: Bank, companies: Sequence[str] = ()) -> list[dict[str, object]]:
    """The interview write-ups in bank order, only those of `companies` when given."""
    by_theme: dict[str, set[str]] = {}
    for question in bank.questions.values():
        for theme in question.themes:
            by_theme.setdefault(theme, set()).add(question.id)
    return [
        {
            "id": i.id,
            "company": i.company,
            "tier": i.tier,
            "type": i.type,
            "round": i.round,
            "themes": len(i.themes),
            "cards": _cards_of(i, by_theme),
        }
        for i in bank.interviews.values()
        if not companies or i.company in companies
    ]


@click.command("interviews")
@click.option(
    "--company", "companies", multiple=True, metavar="ID", help="Only this company's (repeatable)."
)
@json_option
@click.pass_context
def interviews_cmd(ctx: click.Context, companies: tuple[str, ...], as_json: bool) -> None:
    """List the interview write-ups: company, type, round, and what they asked."""
    bank = state(ctx).bank
    rows = interview_rows(bank, check_ids("company", companies, bank.companies))
    notes = [
        f"{plural(len(rows), 'write-up')}; cards: questions on one of the write-up's themes",
        "Study one with: quizzer study --interview ID",
    ]
    columns = ("id", "company", "tier", "type", "round", "themes", "cards")
    _emit(rows, columns, as_json, notes, give_way="company")
