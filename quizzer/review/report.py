"""Every figure `quizzer stats` and the app's stats screen show, computed once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from quizzer.bank.model import Filters
from quizzer.review import stats

if TYPE_CHECKING:
    from quizzer.review.service import ReviewService

TARGETS_SHOWN = 8  # companies with readiness when none is chosen: the most written-up


@dataclass(frozen=True, slots=True)
class StatsReport:
    """Recall, forecast, streak and readiness over the chosen companies' cards (or all)."""

    database: str
    companies: tuple[str, ...]
    overview: stats.Overview
    answers: stats.Retention  # every answer of the last 30 days, today's included
    graduated: stats.Retention  # reviews of graduated cards only
    forecast: list[tuple[datetime, int]]  # (local day, cards due), today first
    damaged: dict[str, str]  # question id -> why its stored row is left out

    @property
    def day_labels(self) -> list[str]:
        """'today', then weekday names."""
        return ["today", *(day.strftime("%a") for day, _ in self.forecast[1:])]


def build(service: ReviewService, companies: tuple[str, ...], database: str) -> StatsReport:
    """The report over `companies`' cards (every card when empty)."""
    bank = service.bank
    filters = Filters(companies=companies)
    targets = list(companies) or [
        c.id
        for c in sorted(bank.companies.values(), key=lambda c: (-c.interviews, c.id))[
            :TARGETS_SHOWN
        ]
    ]
    cards = stats.selected(service, filters)
    overview = stats.overview(service, targets, filters, cards)
    ahead = stats.forecast(cards, service)
    return StatsReport(
        database=database,
        companies=companies,
        overview=overview,
        answers=stats.retention(service, filters=filters, graduated=False),
        graduated=stats.retention(service, filters=filters),
        forecast=[(d.day.astimezone(), d.due) for d in ahead],
        damaged=dict(sorted(service.damaged.items())),
    )


def as_json(report: StatsReport) -> dict[str, Any]:
    """The report as `quizzer stats --json` prints it."""
    overview = report.overview
    return {
        "database": report.database,
        "companies": list(report.companies),
        "streak_days": overview.streak,
        "reviews_today": overview.reviews_today,
        "due_now": overview.due_now,
        "new_available": overview.new_available,
        "new_today": overview.new_today,
        "recall_30d": report.answers.rate,
        "answers_30d": report.answers.reviews,
        "graduated_recall_30d": report.graduated.rate,
        "graduated_reviews_30d": report.graduated.reviews,
        "forecast_7d": [
            {"day": day.date().isoformat(), "due": due} for day, due in report.forecast
        ],
        "topics": [
            {"id": t.key, "due": t.due, "new": t.new, "total": t.total} for t in overview.by_topic
        ],
        "readiness": [
            {"id": r.company, "themes": r.themes, "ready": r.ready, "share": round(r.share, 4)}
            for r in overview.readiness
        ],
        "damaged_cards": report.damaged,
    }
