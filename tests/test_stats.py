"""Progress figures: streak, retention, forecast, readiness, and `quizzer stats --json`."""

from __future__ import annotations

import json
from datetime import timedelta

from quizzer.cli.main import entry
from quizzer.review import stats
from quizzer.review.model import Rating


def test_streak_counts_consecutive_study_days(service, clock):
    assert stats.streak(service) == 0
    for _ in range(3):
        service.rate("t-lru", Rating.AGAIN)
        clock.advance(timedelta(days=1))
    assert stats.streak(service) == 3  # today not studied yet: the streak still holds
    clock.advance(timedelta(days=1))
    assert stats.streak(service) == 0


def test_retention_counts_only_review_cards(service, clock):
    service.rate("t-kv", Rating.EASY)  # a new card: not part of retention
    assert stats.retention(service).reviews == 0
    for rating in (Rating.GOOD, Rating.AGAIN):
        clock.now = service.card("t-kv").due
        while service.card("t-kv").state != "review":
            service.rate("t-kv", Rating.EASY)
            clock.now = service.card("t-kv").due
        service.rate("t-kv", rating)
    kept = stats.retention(service, days=365)
    assert (kept.reviews, kept.recalled, kept.rate) == (2, 1, 0.5)
    assert stats.retention(service, days=1).reviews == 1  # only the last one is recent


def test_forecast_places_cards_on_their_due_day(service, clock):
    service.rate("t-ring", Rating.EASY)
    due = service.card("t-ring").due
    ahead = stats.forecast(service.cards(), service, days=30)
    day = (service.day.start_of_day(due) - service.day.start_of_day(clock())).days
    assert ahead[day] == 1 and sum(ahead) == 1


def test_readiness_needs_review_state_and_high_recall(service, small_bank, clock):
    company = next(iter(small_bank.questions["t-lru"].asked_by))
    before = stats.readiness(small_bank, service.cards(), company)
    assert before.ready == 0 and before.themes > 0
    service.rate("t-lru", Rating.EASY)
    after = stats.readiness(small_bank, service.cards(), company)
    assert after.ready == 1  # its theme is now recalled >= 90%
    clock.advance(timedelta(days=365))
    assert stats.readiness(small_bank, service.cards(), company).ready == 0


def test_stats_json(capsys, tmp_path):
    code = entry(
        ["--db", f"sqlite:///{tmp_path / 's.db'}", "stats", "--json", "--company", "nvidia"]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["companies"][0]["id"] == "nvidia" and data["new_available"] > 300
    assert len(data["forecast_7d"]) == 7 and data["retention_30d"] is None
