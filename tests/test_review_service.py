"""The scheduling core, with a fixed clock and fuzzing off."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from fsrs import Card, Scheduler, State
from fsrs import Rating as FR
from sqlalchemy import func, select

from quizzer.bank.model import Filters
from quizzer.db.models import CardRow, ReviewRow
from quizzer.review.model import Rating
from quizzer.review.settings import StudySettings


@pytest.fixture
def db_url(any_db_url: str) -> str:
    """Every test here runs on SQLite and on PostgreSQL."""
    return any_db_url


def _row(service, qid):
    with service.sessions() as s:
        return s.get(CardRow, qid)


def _reviews(service) -> int:
    with service.sessions() as s:
        return s.scalar(select(func.count()).select_from(ReviewRow))


def test_good_good_again_follows_fsrs_states_and_intervals(service, clock):
    reference = Scheduler(enable_fuzzing=False)
    ref_card = Card(card_id=1, due=clock())
    states = []
    for rating in (Rating.GOOD, Rating.GOOD, Rating.AGAIN):
        clock.now = max(clock.now, service.card("t-lru").due or clock.now)
        outcome = service.rate("t-lru", rating)
        ref_card, _ = reference.review_card(ref_card, FR(int(rating)), clock.now)
        assert outcome.due == ref_card.due
        assert _row(service, "t-lru").stability == ref_card.stability
        states.append(outcome.state)
    assert states == ["learning", "review", "relearning"]
    assert _row(service, "t-lru").lapses == 1


def test_preview_equals_what_rating_applies(service, clock):
    service.rate("t-kv", Rating.GOOD)
    clock.advance(timedelta(minutes=15))
    preview = service.preview("t-kv")
    assert len(set(preview.values())) > 1
    for rating in Rating:
        outcome = service.rate("t-kv", rating)
        assert outcome.interval == preview[rating]
        service.undo()


def test_undo_restores_exact_prior_state(service, clock):
    service.rate("t-ring", Rating.GOOD)
    clock.advance(timedelta(minutes=12))
    before = _row(service, "t-ring")
    snapshot = {c.key: getattr(before, c.key) for c in CardRow.__table__.columns}
    service.rate("t-ring", Rating.AGAIN)
    assert _row(service, "t-ring").reps == 2
    assert service.undo().question_id == "t-ring"
    after = _row(service, "t-ring")
    assert {c.key: getattr(after, c.key) for c in CardRow.__table__.columns} == snapshot
    assert _reviews(service) == 1
    assert service.undo().question_id == "t-ring"
    assert _row(service, "t-ring") is None  # the card is new again
    assert service.undo() is None


def test_buried_card_returns_next_day(service, clock):
    assert "t-reduce" in service.queue()
    service.bury("t-reduce")
    assert "t-reduce" not in service.queue()
    clock.advance(timedelta(hours=18))  # 03:00 next day: still before the 4 am rollover
    assert "t-reduce" not in service.queue()
    clock.advance(timedelta(hours=1, minutes=1))
    assert "t-reduce" in service.queue()


def test_suspend_and_unsuspend(service):
    service.suspend("t-kv")
    assert "t-kv" not in service.queue()
    assert service.card("t-kv").suspended
    service.suspend("t-kv", False)
    assert "t-kv" in service.queue()


def test_daily_new_and_review_limits(make_service, clock):
    service = make_service(settings=StudySettings(new_per_day=2, reviews_per_day=1))
    first = service.queue()
    assert len(first) == 2
    for qid in first:
        service.rate(qid, Rating.EASY)
    assert service.queue() == []  # both new slots used today; nothing due yet
    clock.advance(timedelta(days=40))
    queue = service.queue()
    due = [q for q in queue if service.card(q).state != "new"]
    assert len(due) == 1  # two are due, the review limit is one
    assert len(queue) == 3  # plus two new for the new day


def test_cram_leaves_schedule_untouched(service, clock):
    service.rate("t-lru", Rating.GOOD)
    before = _row(service, "t-lru")
    queue = service.queue(cram=True)
    assert set(queue) == set(service.bank.questions)
    for qid in queue:
        service.rate(qid, Rating.AGAIN, cram=True)
    after = _row(service, "t-lru")
    assert (after.due, after.stability, after.reps) == (before.due, before.stability, before.reps)
    assert _reviews(service) == 1
    assert _row(service, "t-kv") is None


def test_leech_flagged_at_eight_lapses(service, clock):
    service.rate("t-ring", Rating.EASY)
    flags = []
    for _ in range(8):
        clock.now = service.card("t-ring").due
        flags.append(service.rate("t-ring", Rating.AGAIN).became_leech)
        while service.card("t-ring").state != "review":
            clock.now = service.card("t-ring").due
            service.rate("t-ring", Rating.EASY)
    assert flags == [False] * 7 + [True]
    card = service.card("t-ring")
    assert card.leech and card.lapses == 8


def test_due_reviews_come_lowest_retrievability_first(service, clock):
    for qid in ("t-lru", "t-kv", "t-ring"):
        service.rate(qid, Rating.EASY)
        clock.advance(timedelta(days=2))
    clock.advance(timedelta(days=60))
    queue = service.queue()
    started = [q for q in queue if service.card(q).state != "new"]
    retrievability = [service.card(q).retrievability for q in started]
    assert len(started) == 3
    assert retrievability == sorted(retrievability)


def test_new_cards_of_the_selected_company_come_first(service, small_bank):
    company = "bytedance"
    ranked = service.queue(Filters(companies=(company,)))
    counts = [small_bank.questions[q].asked_by.get(company, 0) for q in ranked]
    assert counts and all(c > 0 for c in counts)
    everyone = service.queue()
    assert set(ranked) < set(everyone)


def test_interview_filter_selects_questions_of_that_writeup(service, small_bank):
    interview = next(i for i in small_bank.interviews.values() if "algo-code-lru-cache" in i.themes)
    assert "t-lru" in service.queue(Filters(interview=interview.id))
    assert "t-nocompany" not in service.queue(Filters(interview=interview.id))


def test_removed_question_keeps_history_hidden(make_service, small_bank):
    service = make_service()
    service.rate("t-kv", Rating.GOOD)
    kept = {k: v for k, v in small_bank.questions.items() if k != "t-kv"}
    smaller = dataclasses.replace(small_bank, questions=kept, aliases={})
    service2 = make_service(bank=smaller)
    assert "t-kv" not in service2.queue(cram=True)
    assert _reviews(service2) == 1


def test_alias_carries_history_over(make_service, small_bank):
    service = make_service()
    with service.sessions.begin() as s:
        s.add(
            CardRow(
                question_id="t-kv-old",
                state=int(State.Review),
                step=None,
                stability=10.0,
                difficulty=5.0,
                due=service.clock(),
                last_review=service.clock() - timedelta(days=10),
                reps=3,
                lapses=0,
                suspended=False,
                leech=False,
                created_at=service.clock(),
            )
        )
    assert service.adopt_aliases() == 1
    card = service.card("t-kv")
    assert card.state == "review" and card.reps == 3
