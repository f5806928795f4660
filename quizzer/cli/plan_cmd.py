"""`quizzer plan`: study to an interview date; `plan show` and `plan clear`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from quizzer.cli.common import console, state
from quizzer.cli.suggest import SuggestingGroup

if TYPE_CHECKING:
    from quizzer.review.plan import Plan
    from quizzer.review.service import ReviewService


def _print(service: ReviewService, plan: Plan, as_json: bool) -> None:
    from quizzer.review.plan import plan_summary
    from quizzer.views.plan import renderables

    if as_json:
        click.echo(json.dumps(plan_summary(plan), indent=2))
        return
    for part in renderables(plan, service.bank):
        console.print(part)


@click.group("plan", cls=SuggestingGroup, invoke_without_command=True)
@click.option(
    "--company", "companies", multiple=True, metavar="ID", help="Interviewing at (repeatable)."
)
@click.option("--date", "when", metavar="YYYY-MM-DD", help="The interview date.")
@click.option("--minutes-per-day", "minutes", type=int, help="Minutes a day (default 30).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def plan_group(
    ctx: click.Context,
    companies: tuple[str, ...],
    when: str | None,
    minutes: int | None,
    as_json: bool,
) -> None:
    """A day-by-day plan to an interview date, with a forecast of recall on the day.

    While it runs, `quizzer study` takes each day's new cards from it.
    """
    if ctx.invoked_subcommand is not None:
        return
    from quizzer.review.plan import (
        DEFAULT_MINUTES,
        PlanError,
        build_plan,
        local_today,
        make_target,
        parse_date,
        save_target,
    )

    if not companies and when is None and minutes is None:
        ctx.invoke(show_cmd, as_json=as_json)
        return
    if when is None:
        raise PlanError("give the interview date with --date YYYY-MM-DD")
    service = state(ctx).review_service()
    chosen = minutes if minutes is not None else DEFAULT_MINUTES
    target = make_target(service.bank, companies, parse_date(when), chosen, local_today(service))
    save_target(service, target)
    _print(service, build_plan(service, target), as_json)


@plan_group.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def show_cmd(ctx: click.Context, as_json: bool) -> None:
    """The plan as it stands today (re-derived from what you have studied)."""
    from quizzer.review.plan import build_plan, local_today, stored_target

    service = state(ctx).review_service()
    target = stored_target(service)
    if target is None:
        click.echo("No plan. Make one: quizzer plan --company ID --date YYYY-MM-DD")
        return
    if target.date <= local_today(service):
        click.echo(f"The plan to {target.date} has ended; `quizzer plan clear` removes it.")
        return
    _print(service, build_plan(service, target), as_json)


@plan_group.command("clear")
@click.pass_context
def clear_cmd(ctx: click.Context) -> None:
    """Stop following the plan: study takes new cards by the daily limit again."""
    from quizzer.review.plan import save_target

    save_target(state(ctx).review_service(), None)
    click.echo("Plan cleared.")
