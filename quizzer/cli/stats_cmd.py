"""`quizzer stats`: retention, forecast, streak, readiness per topic and company."""

from __future__ import annotations

import json

import click
from rich.table import Table
from rich.text import Text

from quizzer.cli.common import console, err_console, state


def shown_url(url: str) -> str:
    """The database URL with any password hidden."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


@click.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option("--company", "companies", multiple=True, metavar="ID", help="Readiness for these.")
@click.pass_context
def stats_cmd(ctx: click.Context, as_json: bool, companies: tuple[str, ...]) -> None:
    """Retention, due forecast, streak, and readiness per topic and company."""
    from quizzer.cli.common import check_ids
    from quizzer.review import stats

    app = state(ctx)
    service = app.review_service()
    bank = service.bank
    targets = list(check_ids("company", companies, bank.companies)) or [
        c.id for c in sorted(bank.companies.values(), key=lambda c: -c.interviews)[:8]
    ]
    cards = service.cards()
    overview = stats.overview(service, targets)
    kept = stats.retention(service)
    ahead = stats.forecast(cards, service)
    data = {
        "database": shown_url(app.sessions.url),
        "streak_days": overview.streak,
        "reviews_today": overview.reviews_today,
        "due_now": overview.due_now,
        "new_available": overview.new_available,
        "retention_30d": kept.rate,
        "reviews_30d": kept.reviews,
        "forecast_7d": ahead,
        "topics": [
            {"id": t.key, "due": t.due, "new": t.new, "total": t.total} for t in overview.by_topic
        ],
        "companies": [
            {"id": r.company, "themes": r.themes, "ready": r.ready, "share": round(r.share, 4)}
            for r in overview.readiness
        ],
    }
    data["damaged_cards"] = dict(sorted(service.damaged.items()))
    for qid, reason in sorted(service.damaged.items()):
        err_console.print(
            f"warning: the stored schedule of '{qid}' is damaged ({reason}); it is left out",
            markup=False,
        )
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    rate = f"{kept.rate:.0%} of {kept.reviews}" if kept.rate is not None else "no reviews yet"
    console.print(Text(f"Database: {data['database']}", style="dim"))
    console.print(
        f"Streak [b]{overview.streak}[/b] day(s)   Reviewed today [b]{overview.reviews_today}[/b]"
        f"   Due now [b]{overview.due_now}[/b]   New [b]{overview.new_available}[/b]"
        f"   Retention (30 days) [b]{rate}[/b]"
    )
    console.print("Due in the next 7 days: " + "  ".join(str(n) for n in ahead))
    topics = Table("topic", "due", "new", "total", header_style="bold", box=None)
    for t in overview.by_topic:
        topics.add_row(Text(t.name), str(t.due), str(t.new), str(t.total))
    console.print(topics)
    ready = Table("company", "asked themes", "ready", "share", header_style="bold", box=None)
    for r in overview.readiness:
        ready.add_row(Text(r.name), str(r.themes), str(r.ready), f"{r.share:.0%}")
    console.print(ready)
    console.print(
        "ready = asked themes whose cards are in review with recall >= 90% now", style="dim"
    )
