"""The daily loop with a fixed clock: learning steps inside a sitting, learn-ahead, limits,
custom study and settings that change what the scheduler does."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from quizzer.bank.model import Filters
from quizzer.db.models import CardRow, ReviewRow
from quizzer.review.model import Rating
from quizzer.review.session import StudySession
from quizzer.review.settings import StudySettings


def row(service, qid):
    with service.sessions() as session:
        return session.get(CardRow, qid)


def reviews(service):
    with service.sessions() as session:
        return list(session.scalars(select(ReviewRow).order_by(ReviewRow.id)))


def sitting(service, **kwargs) -> StudySession:
    session = StudySession(service, **kwargs)
    session.load()
    return session


def test_a_learning_card_from_an_earlier_sitting_is_shown_when_due(make_service, clock):
    service = make_service()
    first = sitting(service)
    qid = first.current
    first.rate(Rating.AGAIN)  # learning step: due in 1 minute
    assert row(service, qid).state == 1
    # A new sitting starts at once, with other cards waiting: the step is not due yet.
    second = sitting(make_service())
    assert second.current != qid
    second.rate(Rating.GOOD)
    clock.advance(timedelta(minutes=2))  # the step falls due during the second sitting
    assert second.current == qid  # shown when due, before the next new card


def test_a_ten_minute_step_is_not_shown_at_50_s_while_other_cards_remain(make_service, clock):
    s = sitting(make_service())
    first = s.current
    assert s.rate(Rating.GOOD).interval == timedelta(minutes=10)
    for _ in range(3):
        clock.advance(timedelta(seconds=50))
        assert s.current not in (first, None)
        s.rate(Rating.EASY)
    clock.advance(timedelta(minutes=10))
    assert s.current == first  # due now: before the remaining new cards


def test_learn_ahead_shows_a_learning_card_early_only_when_nothing_else_is_left(
    make_service, clock
):
    service = make_service(settings=StudySettings(new_per_day=1))
    s = sitting(service)
    qid = s.current
    outcome = s.rate(Rating.AGAIN)
    assert s.queue == []
    assert outcome.interval < service.settings.learn_ahead
    assert s.current == qid  # nothing else left: shown early, within learn-ahead
    far = sitting(make_service(settings=StudySettings(new_per_day=1, learn_ahead=timedelta(0))))
    assert far.current is None  # with no learn-ahead the sitting ends instead


def test_the_summary_next_due_agrees_with_the_due_count(make_service, clock):
    service = make_service(settings=StudySettings(new_per_day=1, learn_ahead=timedelta(0)))
    s = sitting(service)
    s.rate(Rating.AGAIN)
    assert s.current is None
    summary = s.summary()
    assert summary.next_due is not None and summary.next_due > clock()
    assert service.day_counts().reviews_due == 0
    clock.advance(summary.next_due - clock())
    assert service.day_counts().reviews_due == 1


def test_the_new_card_limit_stops_the_sitting_and_custom_study_extends_it(make_service, clock):
    service = make_service(settings=StudySettings(new_per_day=2))
    s = sitting(service)
    s.rate(Rating.EASY)
    s.rate(Rating.EASY)
    assert s.current is None
    summary = s.summary()
    assert summary.limit_reached and summary.new_held_back == len(service.bank.questions) - 2
    added = s.add_new(3)
    assert added == 3 and s.remaining.new == 3
    assert service.extra_new_today() == 3
    again = sitting(make_service(settings=StudySettings(new_per_day=2)))
    assert again.remaining.new == 3  # the extra holds for the rest of the day...
    clock.advance(timedelta(days=1))
    assert make_service(settings=StudySettings(new_per_day=2)).extra_new_today() == 0


def test_ending_early_is_not_the_limit(make_service):
    s = sitting(make_service(settings=StudySettings(new_per_day=2)))
    s.rate(Rating.EASY)  # one of today's two new cards, then the learner stops
    assert s.remaining.new == 1 and not s.summary().limit_reached


def test_nothing_due_is_not_a_limit(make_service):
    service = make_service()
    s = sitting(service, filters=Filters(topics=("moe",)))
    assert s.current is None and not s.summary().limit_reached


def test_an_explicit_interview_replay_is_not_cut_by_the_new_limit(make_service, small_bank):
    interview = max(
        small_bank.interviews.values(),
        key=lambda i: len(small_bank.select(Filters(interview=i.id))),
    )
    wanted = small_bank.select(Filters(interview=interview.id))
    service = make_service(settings=StudySettings(new_per_day=1))
    s = sitting(service, filters=Filters(interview=interview.id))
    assert len(wanted) > 1 and s.remaining.new == len(wanted)


def test_new_n_is_this_sittings_number_even_past_the_daily_limit(make_service):
    service = make_service(settings=StudySettings(new_per_day=1))
    sitting(service).rate(Rating.EASY)
    s = sitting(service, new_limit=3)
    assert s.remaining.new == 3


def test_retention_changes_the_intervals(make_service, clock):
    lower = make_service(settings=StudySettings(desired_retention=0.8))
    higher = make_service(settings=StudySettings(desired_retention=0.95))
    lower.rate("t-kv", Rating.GOOD)
    clock.advance(timedelta(minutes=1))
    lower.rate("t-kv", Rating.GOOD)
    clock.advance(timedelta(minutes=10))
    assert higher.preview("t-kv")[Rating.GOOD] < lower.preview("t-kv")[Rating.GOOD]


def test_learning_steps_and_leech_threshold_come_from_the_settings(make_service):
    steps = (timedelta(minutes=3), timedelta(minutes=30))
    service = make_service(settings=StudySettings(learning_steps=steps, leech_threshold=1))
    assert service.preview("t-kv")[Rating.AGAIN] == timedelta(minutes=3)
    service.rate("t-kv", Rating.EASY)
    assert service.scheduler.learning_steps == steps


def test_settings_are_stored_in_the_database(make_service, db_url, small_bank, clock):
    service = make_service()
    service._settings = None  # read from the database, as the app does
    assert service.settings == StudySettings()
    service.save_settings(new_per_day=2, learn_ahead=timedelta(minutes=5), companies=("nvidia",))
    from quizzer.db.engine import open_database
    from quizzer.review.service import ReviewService

    fresh = ReviewService(open_database(db_url), small_bank, clock=clock)
    got = fresh.settings
    assert (got.new_per_day, got.learn_ahead) == (2, timedelta(minutes=5))
    assert got.companies == ("nvidia",)
    assert len(fresh.queue()) == 2


def test_cram_shows_no_interval_and_writes_nothing(make_service):
    service = make_service()
    s = sitting(service, cram=True)
    s.rate(Rating.GOOD)
    assert reviews(service) == [] and s.summary().next_due is None
