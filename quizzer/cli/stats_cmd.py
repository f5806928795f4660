"""`quizzer stats`: retention, forecast, streak, readiness per topic and company."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import click
from rich.table import Table
from rich.text import Text

from quizzer.cli.common import console, err_console, state
from quizzer.review.model import plural

if TYPE_CHECKING:
    from quizzer.review.stats import Retention


def shown_url(url: str) -> str:
    """The database URL with any password hidden."""
    return re.sub(r"^([a-z0-9+]+://[^:/@]*):.*@", r"\1:***@", url)


def _rate(kept: Retention, noun: str) -> str:
    if kept.rate is None:
        return f"no {noun}s yet"
    return f"{kept.rate:.0%} of {plural(kept.reviews, noun)}"


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
    from quizzer.bank.model import Filters
    from quizzer.cli.common import check_ids
    from quizzer.review import stats

    app = state(ctx)
    service = app.review_service(quick=True)
    bank = service.bank
    chosen = check_ids("company", companies, bank.companies)
    filters = Filters(companies=chosen)
    targets = list(chosen) or [
        c.id for c in sorted(bank.companies.values(), key=lambda c: (-c.interviews, c.id))[:8]
    ]
    cards = stats.selected(service, filters)
    overview = stats.overview(service, targets, filters, cards)
    answers = stats.retention(service, filters=filters, graduated=False)
    graduated = stats.retention(service, filters=filters)
    ahead = stats.forecast(cards, service)
    local = [d.day.astimezone() for d in ahead]
    labels = ["today", *(d.strftime("%a") for d in local[1:])]
    data = {
        "database": shown_url(app.sessions.url),
        "companies": list(chosen),
        "streak_days": overview.streak,
        "reviews_today": overview.reviews_today,
        "due_now": overview.due_now,
        "new_available": overview.new_available,
        "recall_30d": answers.rate,
        "answers_30d": answers.reviews,
        "graduated_recall_30d": graduated.rate,
        "graduated_reviews_30d": graduated.reviews,
        "forecast_7d": [
            {"day": day.date().isoformat(), "due": d.due}
            for day, d in zip(local, ahead, strict=True)
        ],
        "topics": [
            {"id": t.key, "due": t.due, "new": t.new, "total": t.total} for t in overview.by_topic
        ],
        "readiness": [
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
    console.print(Text(f"Database: {data['database']}", style="dim"))
    if chosen:
        names = ", ".join(bank.companies[c].name for c in chosen)
        console.print(Text(f"Cards asked by {names} only", style="dim"))
    console.print(
        f"Streak [b]{plural(overview.streak, 'day')}[/b]   "
        f"Reviewed today [b]{overview.reviews_today}[/b]   "
        f"Due now [b]{overview.due_now}[/b]   New [b]{overview.new_available}[/b]"
    )
    console.print(
        f"Recalled, last 30 days: [b]{_rate(answers, 'answer')}[/b]; "
        f"graduated cards only: [b]{_rate(graduated, 'review')}[/b]"
    )
    days = "  ".join(f"{label} {d.due}" for label, d in zip(labels, ahead, strict=True))
    console.print("Due in the next 7 days: " + days)
    topics = Table("topic", "due", "new", "total", header_style="bold", box=None)
    for t in overview.by_topic:
        topics.add_row(Text(t.name), str(t.due), str(t.new), str(t.total))
    console.print(topics)
    console.print("topics sorted by due, then new", style="dim")
    ready = Table("company", "asked themes", "ready", "share", header_style="bold", box=None)
    for r in overview.readiness:
        ready.add_row(Text(r.name), str(r.themes), str(r.ready), f"{r.share:.0%}")
    console.print(ready)
    console.print(
        "ready = asked themes whose cards are in review with recall >= 90% now; sorted by share",
        style="dim",
    )
