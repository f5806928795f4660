"""`quizzer stats`: retention, forecast, streak, readiness per topic and company."""

from __future__ import annotations

import json

import click

from quizzer.cli.common import console, err_console, state


@click.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option(
    "--company",
    "companies",
    multiple=True,
    metavar="ID",
    help="Only this company's cards, and its readiness (repeatable).",
)
@click.pass_context
def stats_cmd(ctx: click.Context, as_json: bool, companies: tuple[str, ...]) -> None:
    """Recall, due forecast, streak, and readiness per topic and company."""
    from quizzer.cli.common import check_ids
    from quizzer.db.target import shown_url
    from quizzer.review.report import as_json as report_json
    from quizzer.review.report import build
    from quizzer.views.stats import renderables

    app = state(ctx)
    service = app.review_service(quick=True)
    chosen = check_ids("company", companies, service.bank.companies)
    report = build(service, tuple(chosen), shown_url(app.sessions.url))
    for qid, reason in report.damaged.items():
        err_console.print(
            f"warning: the stored schedule of '{qid}' is damaged ({reason}); it is left out",
            markup=False,
        )
    if as_json:
        click.echo(json.dumps(report_json(report), indent=2))
        return
    for part in renderables(report, service.bank):
        console.print(part)
