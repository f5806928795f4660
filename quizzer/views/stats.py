"""The stats report as Rich renderables: printed by `quizzer stats`, shown by the app."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from quizzer.bank.model import Bank
from quizzer.review.model import percent, plural
from quizzer.review.report import StatsReport
from quizzer.review.stats import Retention
from quizzer.views.charts import ForecastChart, ReviewHeatmap, readiness_table, retention_table

READY_NOTE = (
    "ready = asked themes whose cards are in review with recall >= 90% now; sorted by share"
)


def rate(kept: Retention, noun: str) -> str:
    """'87% of 23 answers', or 'no answers yet'."""
    if kept.rate is None:
        return f"no {noun}s yet"
    return f"{kept.rate:.0%} of {plural(kept.reviews, noun)}"


def sections(report: StatsReport, bank: Bank) -> list[tuple[str, list[RenderableType]]]:
    """Everything the report says, top to bottom, in named parts: the database line,
    today's figures, the charts (reviews by day, forecast, retention, readiness by
    week), then the topic and readiness tables."""
    overview = report.overview
    summary: list[RenderableType] = []
    if report.companies:
        names = ", ".join(bank.companies[c].name for c in report.companies)
        summary.append(Text(f"Cards asked by {names} only", style="dim"))
    summary.append(
        Text.from_markup(
            f"Streak [b]{plural(overview.streak, 'day')}[/b]   "
            f"Reviewed today [b]{overview.reviews_today}[/b]   "
            f"Due now [b]{overview.due_now}[/b]   "
            f"New today [b]{overview.new_today}[/b] of {overview.new_available} unseen"
        )
    )
    summary.append(
        Text.from_markup(
            f"Recalled, last 30 days: [b]{rate(report.answers, 'answer')}[/b]; "
            f"graduated cards only: [b]{rate(report.graduated, 'review')}[/b]"
        )
    )
    week = zip(report.day_labels[:7], report.forecast[:7], strict=True)
    summary.append(Text("Due in the next 7 days: " + "  ".join(f"{k} {n}" for k, (_, n) in week)))
    topics = Table("topic", "due", "new", "total", header_style="bold", box=None)
    for t in overview.by_topic:
        topics.add_row(Text(t.name), str(t.due), str(t.new), str(t.total))
    ready = Table("company", "asked themes", "ready", "share", header_style="bold", box=None)
    for r in overview.readiness:
        ready.add_row(Text(r.name), str(r.themes), str(r.ready), percent(r.share))
    parts: list[tuple[str, list[RenderableType]]] = [
        ("database", [Text(f"Database: {report.database}", style="dim")]),
        ("summary", summary),
        ("heatmap", [ReviewHeatmap(report.progress)]),
        ("forecast", [ForecastChart(report.forecast)]),
        ("retention", retention_table(report.progress, report.desired_retention)),
        ("readiness-history", readiness_table(report.progress)),
        ("topics", [topics, Text("topics sorted by due, then new", style="dim")]),
        ("readiness", [ready, Text(READY_NOTE, style="dim")]),
    ]
    return [(name, body) for name, body in parts if body]


CHARTS = ("heatmap", "forecast", "retention", "readiness-history")


def renderables(report: StatsReport, bank: Bank) -> list[RenderableType]:
    """Everything the report says, top to bottom, a blank line around each chart."""
    out: list[RenderableType] = []
    for name, body in sections(report, bank):
        if name in CHARTS or (out and name == "topics"):
            out.append(Text(""))
        out += body
    return out
