"""The stats report as Rich renderables: printed by `quizzer stats`, shown by the app."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from quizzer.bank.model import Bank
from quizzer.review.model import plural
from quizzer.review.report import StatsReport
from quizzer.review.stats import Retention

READY_NOTE = (
    "ready = asked themes whose cards are in review with recall >= 90% now; sorted by share"
)


def rate(kept: Retention, noun: str) -> str:
    """'87% of 23 answers', or 'no answers yet'."""
    if kept.rate is None:
        return f"no {noun}s yet"
    return f"{kept.rate:.0%} of {plural(kept.reviews, noun)}"


def renderables(report: StatsReport, bank: Bank) -> list[RenderableType]:
    """Everything the report says, top to bottom."""
    overview = report.overview
    out: list[RenderableType] = [Text(f"Database: {report.database}", style="dim")]
    if report.companies:
        names = ", ".join(bank.companies[c].name for c in report.companies)
        out.append(Text(f"Cards asked by {names} only", style="dim"))
    out.append(
        Text.from_markup(
            f"Streak [b]{plural(overview.streak, 'day')}[/b]   "
            f"Reviewed today [b]{overview.reviews_today}[/b]   "
            f"Due now [b]{overview.due_now}[/b]   "
            f"New today [b]{overview.new_today}[/b] of {overview.new_available} unseen"
        )
    )
    out.append(
        Text.from_markup(
            f"Recalled, last 30 days: [b]{rate(report.answers, 'answer')}[/b]; "
            f"graduated cards only: [b]{rate(report.graduated, 'review')}[/b]"
        )
    )
    days = "  ".join(
        f"{label} {due}" for label, (_, due) in zip(report.day_labels, report.forecast, strict=True)
    )
    out.append(Text("Due in the next 7 days: " + days))
    topics = Table("topic", "due", "new", "total", header_style="bold", box=None)
    for t in overview.by_topic:
        topics.add_row(Text(t.name), str(t.due), str(t.new), str(t.total))
    out += [topics, Text("topics sorted by due, then new", style="dim")]
    ready = Table("company", "asked themes", "ready", "share", header_style="bold", box=None)
    for r in overview.readiness:
        ready.add_row(Text(r.name), str(r.themes), str(r.ready), f"{r.share:.0%}")
    out += [ready, Text(READY_NOTE, style="dim")]
    return out
