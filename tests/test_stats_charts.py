"""Progress charts: reviews by day, the 30-day forecast, weekly true retention and
readiness over time, at a fixed clock (T0 is Monday 2 March 2026, 9:00 UTC)."""

from __future__ import annotations

from datetime import date, timedelta

from rich.console import Console

from quizzer.review import progress, stats
from quizzer.review.model import Rating
from quizzer.views.charts import ForecastChart, ReviewHeatmap, forecast_axis


def test_answers_land_on_their_study_day(service, clock):
    start = clock.now
    clock.now = start - timedelta(
        days=3, hours=6
    )  # Fri 27 Feb, 3:00 UTC: Thursday 26 Feb's study day
    service.rate("t-lru", Rating.AGAIN)
    clock.now = start
    service.rate("t-kv", Rating.GOOD)
    service.rate("t-ring", Rating.GOOD)
    done = progress.progress(service, service.cards(), [])
    assert done.today == date(2026, 3, 2) and done.first_day.weekday() == 0
    assert done.reviews_by_day == {date(2026, 2, 26): 1, date(2026, 3, 2): 2}
    assert done.first_review == date(2026, 2, 26)


def test_week_retention_counts_graduated_answers_only(service, clock):
    service.rate("t-kv", Rating.EASY)  # new card: not counted
    for rating in (Rating.GOOD, Rating.AGAIN, Rating.HARD):
        while service.card("t-kv").state != "review":
            clock.now = service.card("t-kv").due
            service.rate("t-kv", Rating.EASY)
        clock.now = service.card("t-kv").due
        service.rate("t-kv", rating)
    done = progress.progress(service, service.cards(), [])
    weeks = {w.week: w for w in done.retention if w.reviews}
    assert sum(w.reviews for w in weeks.values()) == 3
    assert sum(w.recalled for w in weeks.values()) == 2
    kept = stats.retention(service, days=400)
    assert (kept.reviews, kept.recalled) == (3, 2)


def test_readiness_over_time_rises_when_cards_are_reviewed(service, small_bank, clock):
    company = next(iter(small_bank.questions["t-lru"].asked_by))
    clock.advance(timedelta(weeks=2))
    service.rate("t-lru", Rating.EASY)
    cards = service.cards()
    done = progress.progress(service, cards, [company])
    (history,) = done.readiness
    assert history.ready[-3] == 0 and history.ready[-1] >= 1
    assert history.ready[-1] == stats.readiness(small_bank, cards, company).ready


def test_forecast_labels_today_and_mondays(service, clock):
    days = [(clock.now + timedelta(days=n), n % 3) for n in range(30)]
    ticks, labels = forecast_axis(days)
    assert labels.startswith("today")
    assert "Mon 9" in labels and labels.index("Mon 9") == 14  # 7 days on, 2 columns a day
    assert ticks[14] == "┬"


def test_charts_fit_80_columns(service, clock):
    service.rate("t-lru", Rating.GOOD)
    done = progress.progress(service, service.cards(), [])
    console = Console(width=80, record=True, color_system=None)
    console.print(ReviewHeatmap(done))
    console.print(ForecastChart([(clock.now + timedelta(days=n), n) for n in range(30)]))
    lines = console.export_text().splitlines()
    assert max(len(x) for x in lines) <= 80
    assert lines[2].startswith("Mon") and len(lines[2].rstrip()) == 4 + 53
