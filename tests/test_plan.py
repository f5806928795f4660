"""Study to a date: the plan's spread, its forecast against a simulated learner, re-planning
after a missed day, and the command's errors."""

from __future__ import annotations

import random
from datetime import UTC, date, timedelta
from pathlib import Path

import pytest

from quizzer.bank.model import Bank
from quizzer.bank.order import asked_count
from quizzer.cli.main import entry
from quizzer.db.engine import open_database
from quizzer.review import plan as P
from quizzer.review.clock import DayBoundary, FixedClock
from quizzer.review.model import Rating
from quizzer.review.service import ReviewService
from quizzer.review.settings import StudySettings

from .conftest import T0

FIXTURES = Path(__file__).parent / "fixtures" / "small"
TARGET = P.PlanTarget(("alibaba",), date(2026, 3, 12), 30)  # 10 days after T0; 4 cards
SEEDS = 24
# The forecast is an exact expectation over the learner model except for the branches
# pruned below `PRUNE`; the mean of SEEDS runs is within a few points of it.
RELATIVE_TOLERANCE = 0.05


def new_service(url: str, bank: Bank, clock: FixedClock) -> ReviewService:
    return ReviewService(
        open_database(url),
        bank,
        clock=clock,
        settings=StudySettings(),
        fuzz=False,
        day=DayBoundary(tz=UTC, hour=4),
    )


def sitting(service: ReviewService, clock: FixedClock, rng: random.Random) -> None:
    """One day's study as a learner who recalls each card with FSRS's predicted
    probability (Good if recalled, else Again); learning steps are waited for."""
    end = clock.now + P.SITTING
    while True:
        parts = service.queue_parts()
        ids = parts.learning_due(clock.now) + parts.reviews + parts.new
        if not ids:
            upcoming = service.next_due()
            if upcoming is None or upcoming > end:
                return
            clock.now = max(clock.now, upcoming)
            continue
        for qid in ids:
            recall = service.card(qid).retrievability or 0.0
            rating = Rating.GOOD if rng.random() < recall else Rating.AGAIN
            service.rate(qid, rating, duration_ms=30_000)


def simulate(
    service: ReviewService, clock: FixedClock, target: P.PlanTarget, seed: int, skip=()
) -> dict[str, date]:
    """Follow the plan to the date (skipping the days in `skip`); each card's first day."""
    rng = random.Random(seed)
    first: dict[str, date] = {}
    for k in range((target.date - T0.date()).days):
        clock.now = T0 + timedelta(days=k)
        if k in skip:
            continue
        before = {q for q, c in service.cards().items() if c.state != "new"}
        sitting(service, clock, rng)
        for qid, card in service.cards().items():
            if card.state != "new" and qid not in before:
                first[qid] = clock.now.date()
    return first


def outcome(service: ReviewService, clock: FixedClock, target: P.PlanTarget, cards) -> float:
    """The weighted share of asked themes recalled at the interview, from the real state."""
    clock.now = P.interview_time(service, target.date)
    recall = {q: service.card(q).retrievability or 0.0 for q in cards}
    return P.theme_share(service.bank, target.companies, recall)


def test_the_plan_introduces_every_card_in_time_and_its_forecast_holds(small_bank, tmp_path):
    forecasts, outcomes = [], []
    for seed in range(SEEDS):
        clock = FixedClock(T0)
        service = new_service(f"sqlite:///{tmp_path / f's{seed}.db'}", small_bank, clock)
        P.save_target(service, TARGET)
        plan = P.build_plan(service, TARGET)
        assert plan.dropped == [] and len(plan.cards) == 4
        first = simulate(service, clock, TARGET, seed)
        assert set(first) == set(plan.cards)  # every planned card, only those
        assert max(first.values()) <= plan.last_intro
        assert plan.last_intro == TARGET.date - timedelta(days=plan.margin_days)
        forecasts.append(plan.forecast)
        outcomes.append(outcome(service, clock, TARGET, plan.cards))
    forecast = forecasts[0]
    assert all(f == forecast for f in forecasts)  # the same state, the same plan
    simulated = sum(outcomes) / len(outcomes)
    assert abs(simulated - forecast) <= RELATIVE_TOLERANCE * forecast, (forecast, simulated)


def test_each_days_forecast_grows_to_the_plans(make_service):
    service = make_service()
    plan = P.build_plan(service, TARGET)
    ready = [d.ready for d in plan.days]
    assert ready == sorted(ready) and ready[0] > 0  # every day adds cards, none is lost
    assert ready[-1] == pytest.approx(plan.forecast)  # by the end: every planned card
    assert all(d.ready <= d.covered + 1e-9 for d in plan.days)  # recall needs a started card


def test_study_takes_the_days_new_cards_from_the_plan(make_service):
    service = make_service()
    P.save_target(service, TARGET)
    plan = P.build_plan(service, TARGET)
    parts = service.queue_parts()
    assert parts.new == plan.new_today and len(parts.new) == 1  # 4 cards over 7 days
    P.save_target(service, None)
    assert len(service.queue_parts().new) > 1  # the daily limit again


def test_a_missed_day_replans_without_dropping_a_card(make_service, clock):
    service = make_service()
    P.save_target(service, TARGET)
    before = P.build_plan(service, TARGET)
    clock.advance(timedelta(days=2))  # two days missed
    after = P.build_plan(service, TARGET)
    assert after.dropped == [] and sorted(after.cards) == sorted(before.cards)
    placed = [qid for day in after.days for qid in day.new]
    assert sorted(placed) == sorted(before.cards)
    assert all(day.day <= after.last_intro for day in after.days if day.new)
    assert len(after.new_today) >= len(before.new_today)


def test_a_lapse_moves_the_remaining_cards(make_service, clock):
    service = make_service()
    P.save_target(service, TARGET)
    first = P.build_plan(service, TARGET).new_today[0]
    service.rate(first, Rating.AGAIN)
    service.rate(first, Rating.GOOD)
    again = P.build_plan(service, TARGET)
    assert first in again.cards and first not in [q for d in again.days for q in d.new]
    assert again.new_today == []  # today's share is done


def test_too_few_minutes_drop_the_least_asked(tmp_path):
    from quizzer.bank.cache import load_bank_cached

    bank = load_bank_cached()
    clock = FixedClock(T0)
    service = new_service(f"sqlite:///{tmp_path / 'r.db'}", bank, clock)
    target = P.PlanTarget(("alibaba",), date(2026, 3, 9), 6)
    plan = P.build_plan(service, target)
    assert plan.dropped and len(plan.dropped) < len(plan.cards)
    kept = [q for q in plan.cards if q not in plan.dropped]

    def asked(qid: str) -> int:
        return asked_count(bank, bank.questions[qid], target.companies)

    assert min(asked(q) for q in kept) >= max(asked(q) for q in plan.dropped)
    assert [asked(q) for q in plan.dropped] == sorted(asked(q) for q in plan.dropped)
    assert "left out" in plan.notes()[0]
    for day in plan.days:
        if day.new:
            assert day.minutes <= target.minutes_per_day
            assert day.day <= plan.last_intro


def test_a_date_too_close_introduces_nothing_and_says_so(make_service):
    service = make_service()
    target = P.PlanTarget(("alibaba",), date(2026, 3, 4), 30)
    plan = P.build_plan(service, target)
    assert plan.too_close and plan.new_today == [] and len(plan.dropped) == 4
    assert "too close" in plan.notes()[0]


def test_the_last_day_reviews_weak_cards_once_more(make_service, clock):
    service = make_service()
    P.save_target(service, TARGET)
    qid = P.build_plan(service, TARGET).new_today[0]
    service.rate(qid, Rating.EASY)
    clock.advance(timedelta(days=1))
    service.rate(qid, Rating.GOOD)  # due after the date, recall there below FINAL_RECALL
    clock.now = T0 + timedelta(days=9)  # the day before the date; the card is not due
    assert service.card(qid).due > P.interview_time(service, TARGET.date)
    parts = service.queue_parts()
    assert qid in parts.reviews
    service.rate(qid, Rating.GOOD)
    assert qid not in service.queue_parts().reviews  # once


def test_the_budget_comes_from_the_history_when_there_is_enough(make_service, clock):
    service = make_service()
    assert P.estimate_budget(service).source == "default"
    from quizzer.db.models import ReviewRow

    with service.sessions.begin() as session:
        for i in range(45):
            state = None if i < 12 else 2
            session.add(
                ReviewRow(
                    question_id="t-kv",
                    rating=3,
                    reviewed_at=T0,
                    duration_ms=60_000 if state is None else 12_000,
                    state_before=state,
                    state_after=2,
                    due_after=T0,
                )
            )
    budget = P.estimate_budget(service)
    assert budget.source == "your history"
    assert budget.new_minutes == pytest.approx(1.0) and budget.review_minutes == pytest.approx(0.2)


SOON = (date.today() + timedelta(days=60)).isoformat()


def run_cli(db_url: str, *args: str) -> int:
    return entry(["--bank", str(FIXTURES), "--db", db_url, "plan", *args])


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--company", "alibaba", "--date", "2020-01-01"], "must be after today"),
        (["--company", "alibaba", "--date", "2099-01-01"], "at most 365 days"),
        (["--company", "alibab", "--date", SOON], "did you mean 'alibaba'"),
        (["--company", "alibaba", "--date", "01/02/2027"], "is not a date"),
        (["--company", "alibaba", "--date", SOON, "--minutes-per-day", "0"], "more than 0"),
        (
            ["--company", "alibaba", "--date", SOON, "--minutes-per-day", "-5"],
            "more than 0",
        ),
        (["--date", SOON], "at least one company"),
        (["--company", "alibaba"], "--date"),
    ],
)
def test_bad_input_is_one_line_and_a_non_zero_exit(db_url, capsys, args, says):
    code = run_cli(db_url, *args)
    err = capsys.readouterr().err
    assert code != 0 and says in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_plan_show_and_clear(db_url, capsys):
    import json

    assert run_cli(db_url, "show") == 0
    assert "No plan" in capsys.readouterr().out
    assert run_cli(db_url, "--company", "alibaba", "--date", SOON, "--json") == 0
    made = json.loads(capsys.readouterr().out)
    # the main bank is loaded too (--bank adds a folder): alibaba asks far more than 4 cards
    assert made["cards"] > 4 and made["dropped"] == [] and 0 < made["forecast"] <= 1
    assert run_cli(db_url, "show") == 0
    assert "Forecast recall on the day" in capsys.readouterr().out
    assert run_cli(db_url, "clear") == 0
    capsys.readouterr()
    assert run_cli(db_url, "show") == 0
    assert "No plan" in capsys.readouterr().out
