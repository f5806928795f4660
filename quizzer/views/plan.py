"""A study plan as Rich renderables: printed by `quizzer plan`, shown by the app."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from quizzer.bank.model import Bank
from quizzer.review.model import percent, plural
from quizzer.review.plan import FINAL_RECALL, Plan

BAR_WIDTH = 20
FORECAST_NOTE = (
    "recall on the day = expected share of the companies' asked themes (weighted by how "
    "many write-ups asked each) with a card you recall at noon on the date; per day, from "
    "the cards started by then (started = share of those themes with a card started)"
)


def bar(share: float, width: int = BAR_WIDTH) -> str:
    """'████████░░░░' for a share from 0 to 1."""
    filled = round(max(0.0, min(1.0, share)) * width)
    return "█" * filled + "░" * (width - filled)


def renderables(plan: Plan, bank: Bank) -> list[RenderableType]:
    """The plan, top to bottom: target, forecast, notes, one row per day."""
    target = plan.target
    names = ", ".join(bank.companies[c].name for c in target.companies if c in bank.companies)
    days_left = (target.date - plan.today).days
    out: list[RenderableType] = [
        Text(
            f"Plan for {names}: interview on {target.date} "
            f"({plural(days_left, 'day')} from today), {target.minutes_per_day} min a day"
        ),
        Text.from_markup(
            f"Forecast recall on the day: [b]{percent(plan.forecast)}[/b]   "
            f"{len(plan.cards) - len(plan.dropped)} of {plural(len(plan.cards), 'card')} "
            f"planned; new cards until {plan.last_intro} ({plan.margin_days} days before)"
        ),
        Text(FORECAST_NOTE, style="dim"),
        Text(
            f"Budget ({plan.budget.source}): {plan.budget.new_minutes:.1f} min a new card, "
            f"{plan.budget.review_minutes:.1f} min a review",
            style="dim",
        ),
    ]
    for note in plan.notes():
        out.append(Text(note, style="yellow"))
    if plan.dropped:
        shown = ", ".join(plan.dropped[:8]) + (" ..." if len(plan.dropped) > 8 else "")
        out.append(Text(f"Left out: {shown}", style="dim"))
    table = Table(box=None, pad_edge=False)
    for column in ("day", "new", "reviews", "minutes"):
        table.add_column(column, justify="right" if column != "day" else "left")
    table.add_column("started", justify="right")
    table.add_column("recall on the day")
    for day in plan.days:
        label = f"{day.day:%a %d %b}" + (" (last)" if day.final else "")
        style = "red" if day.minutes > target.minutes_per_day else ""
        table.add_row(
            label,
            str(len(day.new)),
            f"{day.reviews:.0f}",
            Text(f"{day.minutes:.0f}", style=style),
            percent(day.covered),
            f"{bar(day.ready)} {percent(day.ready)}",
        )
    out.append(table)
    out.append(
        Text(
            f"The last day, every planned card whose recall at the interview would be below "
            f"{FINAL_RECALL:.0%} is reviewed once more.",
            style="dim",
        )
    )
    return out
