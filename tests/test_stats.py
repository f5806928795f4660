"""Progress figures: streak, retention, forecast, readiness, and `quizzer stats --json`."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from fsrs import Scheduler

from quizzer.cli.main import entry
from quizzer.db.engine import open_database
from quizzer.review import stats
from quizzer.review.clock import DayBoundary, FixedClock
from quizzer.review.model import Rating
from quizzer.review.service import ReviewService


@pytest.fixture
def db_url(any_db_url: str) -> str:
    """Every test here runs on SQLite and on PostgreSQL."""
    return any_db_url


def test_streak_counts_consecutive_study_days(service, clock):
    assert stats.streak(service) == 0
    for _ in range(3):
        service.rate("t-lru", Rating.AGAIN)
        clock.advance(timedelta(days=1))
    assert stats.streak(service) == 3  # today not studied yet: the streak still holds
    clock.advance(timedelta(days=1))
    assert stats.streak(service) == 0


def local_day_service(tmp_path, bank, clock: FixedClock, tz: ZoneInfo) -> ReviewService:
    return ReviewService(
        open_database(f"sqlite:///{tmp_path / 's.db'}"),
        bank,
        clock=clock,
        scheduler=Scheduler(enable_fuzzing=False),
        day=DayBoundary(tz=tz, hour=4),
    )


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_streak_matches_study_days_across_a_dst_change(small_bank, tmp_path, seed):
    """Random histories around the March DST switch, against local calendar days (4 am)."""
    tz = ZoneInfo("America/New_York")
    rng = random.Random(seed)
    local = datetime(2026, 3, 20, 3, 30, tzinfo=tz) + timedelta(hours=rng.choice([0, 2, 12]))
    now = local.astimezone(UTC)  # the scheduler takes UTC; the day boundary is local
    clock = FixedClock(now)
    service = local_day_service(tmp_path, small_bank, clock, tz)
    gap = rng.randint(3, 25)
    times = [now - timedelta(minutes=rng.randint(0, 60))]  # maybe today, maybe yesterday
    times += [now - timedelta(days=d, hours=rng.uniform(-3, 3)) for d in range(1, 30) if d != gap]
    times += [datetime(2026, 3, 8, 4, 0, tzinfo=tz), datetime(2026, 3, 9, 3, 59, tzinfo=tz)]
    for at in times:
        clock.now = at.astimezone(UTC)
        service.rate("t-lru", Rating.AGAIN)
    clock.now = now
    local_days = {(t.astimezone(tz) - timedelta(hours=4)).date() for t in times}
    today = (now.astimezone(tz) - timedelta(hours=4)).date()
    day = today if today in local_days else today - timedelta(days=1)
    expected = 0
    while day in local_days:
        expected += 1
        day -= timedelta(days=1)
    assert expected > 0
    assert stats.streak(service) == expected


def test_a_day_before_the_dst_switch_starts_at_its_own_4_am(small_bank, tmp_path):
    """3:30 am EST on 7 March belongs to 6 March's study day, so 7 March is a gap."""
    tz = ZoneInfo("America/New_York")
    clock = FixedClock(datetime(2026, 3, 10, 12, tzinfo=tz).astimezone(UTC))
    service = local_day_service(tmp_path, small_bank, clock, tz)
    now = clock.now
    for day, hour, minute in [(10, 10, 0), (9, 10, 0), (8, 10, 0), (7, 3, 30), (6, 10, 0)]:
        clock.now = datetime(2026, 3, day, hour, minute, tzinfo=tz).astimezone(UTC)
        service.rate("t-lru", Rating.AGAIN)
    clock.now = now
    assert stats.streak(service) == 3


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
    assert ahead[day].due == 1 and sum(d.due for d in ahead) == 1
    assert ahead[day].day == service.day.start_of_day(due)


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
    from quizzer.bank.loader import load_bank

    asked = sum(1 for q in load_bank().questions.values() if "nvidia" in q.asked_by)
    assert data["readiness"][0]["id"] == "nvidia" and data["companies"] == ["nvidia"]
    assert data["new_available"] == asked  # --company filters the counts too
    assert sum(t["total"] for t in data["topics"]) == asked
    assert len(data["forecast_7d"]) == 7 and data["recall_30d"] is None
    assert data["forecast_7d"][0]["due"] == 0 and "day" in data["forecast_7d"][0]


def test_stats_counts_todays_answers_in_the_30_day_recall(capsys, tmp_path):
    db = f"sqlite:///{tmp_path / 's.db'}"
    from quizzer.bank.loader import load_bank
    from quizzer.db.engine import open_database
    from quizzer.review.service import ReviewService

    service = ReviewService(open_database(db), load_bank())
    for qid, rating in zip(service.queue()[:5], [3, 3, 1, 4, 3], strict=True):
        service.rate(qid, Rating(rating))
    assert entry(["--db", db, "stats", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["answers_30d"], data["recall_30d"]) == (5, 0.8)
    assert data["graduated_reviews_30d"] == 0 and data["graduated_recall_30d"] is None
    assert entry(["--db", db, "stats"]) == 0
    out = capsys.readouterr().out
    assert "80% of 5 answers" in out and "graduated cards only: no reviews yet" in out
    line = next(x for x in out.splitlines() if x.startswith("Due in the next 7 days:"))
    labels = line.split(": ", 1)[1].split()[::2]
    assert labels[0] == "today" and len(labels) == 7 and labels[1][:2].isalpha()


def test_percent_claims_all_or_none_only_when_true():
    from quizzer.review.model import percent

    assert [percent(x) for x in (0.0, 0.004, 0.5, 0.994, 0.996, 1.0)] == [
        "0%",
        "1%",
        "50%",
        "99%",
        "99%",
        "100%",
    ]
