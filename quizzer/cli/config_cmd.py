"""`quizzer config` (show, get, set, reset) and `quizzer setup`: the study settings, which
are stored in the database in use."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING

import click
from rich.table import Table

from quizzer.cli.common import check_ids, console, state
from quizzer.cli.suggest import SuggestingGroup
from quizzer.review.settings import (
    LEVELS,
    SPECS,
    Spec,
    StudySettings,
    describe,
    show_duration,
    spec,
)

if TYPE_CHECKING:
    from quizzer.review.service import ReviewService


def _service(ctx: click.Context) -> ReviewService:
    return state(ctx).review_service()


def _spec(name: str) -> Spec:
    """The setting called `name`; a mistyped one names the nearest and `quizzer config`."""
    check_ids("setting", [name], SPECS)
    return spec(name)


def _check_bank_ids(ctx: click.Context, field: str, value: object) -> None:
    bank = state(ctx).bank
    if field == "companies":
        check_ids("company", list(value), bank.companies)  # type: ignore[call-overload]
    elif field == "focus":
        check_ids("topic", list(value), bank.topics)  # type: ignore[call-overload]


@click.group("config", cls=SuggestingGroup, invoke_without_command=True)
@click.pass_context
def config_group(ctx: click.Context) -> None:
    """Show or change the study settings (kept in the database, so they follow it)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(show_cmd)


@config_group.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def show_cmd(ctx: click.Context, as_json: bool) -> None:
    """Every setting with its value and what it does."""
    service = _service(ctx)
    rows = describe(service.settings)
    defaults = {name: value for name, value, _ in describe(StudySettings())}
    if as_json:
        values = {name: _plain(getattr(service.settings, s.field)) for name, s in SPECS.items()}
        fitted = service.settings.parameters
        values["parameters"] = fitted._asdict() if fitted else "default"
        console.print_json(json.dumps(values))
        return
    table = Table(box=None, pad_edge=False)
    for column in ("setting", "value", "what it does"):
        table.add_column(column)
    for name, value, help_text in rows:
        shown = value if value == defaults[name] else f"[b]{value}[/b]"
        table.add_row(name, shown, help_text)
    console.print(table)
    fitted = service.settings.parameters
    shown = fitted.describe() if fitted else "default (fit yours with: quizzer optimize)"
    console.print(f"\nFSRS parameters: {shown}", markup=False)
    console.print(f"Database: {service.sessions.url}", markup=False)
    console.print("Change one with: quizzer config set NAME VALUE", markup=False)


def _plain(value: object) -> object:
    """A setting value as JSON shows it: durations as text like '10m'."""
    if isinstance(value, timedelta):
        return show_duration(value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


@config_group.command("get")
@click.argument("name")
@click.pass_context
def get_cmd(ctx: click.Context, name: str) -> None:
    """Print one setting's value."""
    chosen = _spec(name)
    console.print(chosen.show(getattr(_service(ctx).settings, chosen.field)), markup=False)


@config_group.command("set")
@click.argument("name")
@click.argument("value", nargs=-1, required=True)
@click.pass_context
def set_cmd(ctx: click.Context, name: str, value: tuple[str, ...]) -> None:
    """Change a setting, e.g. `set new-per-day 30`, `set learning-steps 1m 10m`."""
    chosen = _spec(name)
    parsed = chosen.parse(" ".join(value))
    _check_bank_ids(ctx, chosen.field, parsed)
    settings = _service(ctx).save_settings(**{chosen.field: parsed})
    console.print(f"{name} = {chosen.show(getattr(settings, chosen.field))}", markup=False)


@config_group.command("reset")
@click.argument("name")
@click.pass_context
def reset_cmd(ctx: click.Context, name: str) -> None:
    """Put a setting back to its default."""
    chosen = _spec(name)
    default = getattr(StudySettings(), chosen.field)
    _service(ctx).save_settings(**{chosen.field: default})
    console.print(f"{name} = {chosen.show(default)} (default)", markup=False)


@click.command("setup")
@click.option("--company", "companies", multiple=True, metavar="ID", help="A target company.")
@click.option("--level", type=click.Choice([*LEVELS, "none"]), help="The hiring you aim at.")
@click.option("--focus", multiple=True, metavar="TOPIC", help="A topic to learn first.")
@click.pass_context
def setup_cmd(
    ctx: click.Context, companies: tuple[str, ...], level: str | None, focus: tuple[str, ...]
) -> None:
    """Say what you prepare for: target companies, level and focus topics.

    They decide which new cards come first. Without options it asks.
    """
    service = _service(ctx)
    current = service.settings
    if not (companies or level or focus):
        companies, level, focus = _ask(ctx, current)
    wanted = current
    changes: dict[str, object] = {}
    if companies:
        changes["companies"] = SPECS["companies"].parse(" ".join(companies))
    if level:
        changes["level"] = SPECS["level"].parse(level)
    if focus:
        changes["focus"] = SPECS["focus"].parse(" ".join(focus))
    for field, value in changes.items():
        _check_bank_ids(ctx, field, value)
    if changes:
        wanted = service.save_settings(**changes)
    for name in ("companies", "level", "focus"):
        console.print(f"{name}: {SPECS[name].show(getattr(wanted, SPECS[name].field))}")


def _ask(
    ctx: click.Context, current: StudySettings
) -> tuple[tuple[str, ...], str, tuple[str, ...]]:
    bank = state(ctx).bank
    top = sorted(bank.companies.values(), key=lambda c: (-c.interviews, c.id))[:12]
    console.print("Companies with the most write-ups: " + ", ".join(c.id for c in top))
    companies = click.prompt(
        "Target companies (ids, comma-separated; empty for all)",
        default=", ".join(current.companies),
        show_default=bool(current.companies),
    )
    level = click.prompt(
        "Level", type=click.Choice([*LEVELS, "none"]), default=current.level or "none"
    )
    console.print("Topics: " + ", ".join(sorted(bank.topics)))
    focus = click.prompt(
        "Focus topics (ids; empty for none)",
        default=", ".join(current.focus),
        show_default=bool(current.focus),
    )
    return (companies or "none",), level, (focus or "none",)
