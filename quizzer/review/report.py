"""Every figure `quizzer stats` and the app's stats screen show, computed once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from quizzer.bank.model import Filters
from quizzer.review import progress, stats

if TYPE_CHECKING:
    from quizzer.review.service import ReviewService

TARGETS_SHOWN = 8  # companies with readiness when none is chosen: the most written-up
FORECAST_DAYS = 30


@dataclass(frozen=True, slots=True)
class StatsReport:
    """Recall, forecast, streak and readiness over the chosen companies' cards (or all)."""

    database: str
    companies: tuple[str, ...]
    overview: stats.Overview
    answers: stats.Retention  # every answer of the last 30 days, today's included
    graduated: stats.Retention  # reviews of graduated cards only
    forecast: list[tuple[datetime, int]]  # (local day, cards due), today first, 30 days
    damaged: dict[str, str]  # question id -> why its stored row is left out
    progress: progress.Progress  # reviews by day, retention and readiness by week
    desired_retention: float  # the setting true retention is held against

    @property
    def day_labels(self) -> list[str]:
        """'today', then weekday names, one per forecast day."""
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
    ahead = stats.forecast(cards, service, days=FORECAST_DAYS)
    ids = None if filters.empty else [q.id for q in bank.select(filters)]
    return StatsReport(
        database=database,
        companies=companies,
        overview=overview,
        answers=stats.retention(service, filters=filters, graduated=False),
        graduated=stats.retention(service, filters=filters),
        forecast=[(d.day.astimezone(), d.due) for d in ahead],
        damaged=dict(sorted(service.damaged.items())),
        progress=progress.progress(service, cards, targets, ids),
        desired_retention=service.settings.desired_retention,
    )


def as_json(report: StatsReport) -> dict[str, Any]:
    """The report as `quizzer stats --json` prints it.

    `reviews_by_day`: every answer per study day with any, over the last 53 weeks (from
    `reviews_by_day_from`, a Monday). `retention_by_week`: answers to cards in review
    (learning steps not counted) and how many were Hard, Good or Easy, per study week
    (`week` is its Monday). `readiness_by_week`: per company, its asked themes ready at
    each week's end (the current week: now)."""
    overview = report.overview
    done = report.progress
    forecast = [{"day": day.date().isoformat(), "due": due} for day, due in report.forecast]
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
        "forecast_7d": forecast[:7],
        "forecast_30d": forecast,
        "reviews_by_day": [
            {"day": day.isoformat(), "reviews": n} for day, n in done.reviews_by_day.items()
        ],
        "reviews_by_day_from": done.first_day.isoformat(),
        "retention_by_week": [
            {
                "week": w.week.isoformat(),
                "reviews": w.reviews,
                "recalled": w.recalled,
                "rate": None if w.rate is None else round(w.rate, 4),
            }
            for w in done.retention
        ],
        "readiness_by_week": [
            {
                "id": r.company,
                "themes": r.themes,
                "weeks": [
                    {"week": week.isoformat(), "ready": n, "share": round(share, 4)}
                    for week, n, share in zip(done.weeks, r.ready, r.shares, strict=True)
                ],
            }
            for r in done.readiness
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
