"""Pilot tests: drive the real app over a temp database; assert rows and FSRS state."""

from __future__ import annotations

from datetime import timedelta

from fsrs import Card, Scheduler
from fsrs import Rating as FR
from sqlalchemy import func, select
from textual.widgets import Static

from quizzer.bank.model import Filters
from quizzer.cli.main import entry
from quizzer.db.models import CardRow, ReviewRow
from quizzer.review.model import Rating, format_interval
from quizzer.review.settings import StudySettings
from quizzer.tui.app import QuizzerApp
from quizzer.tui.screens.browse import BrowseScreen
from quizzer.tui.screens.study import StudyScreen
from quizzer.tui.screens.summary import SummaryScreen
from quizzer.tui.widgets.rating_bar import RatingBar

from ..conftest import FIXTURES, quick_service
from .conftest import settle


def reviews(service) -> list[ReviewRow]:
    with service.sessions() as s:
        return list(s.scalars(select(ReviewRow).order_by(ReviewRow.id)))


def card_row(service, qid):
    with service.sessions() as s:
        return s.get(CardRow, qid)


async def test_reveal_and_rate_each_rating(make_app, service, clock):
    app = make_app(start_study=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, StudyScreen)
        order = list(screen.session.queue)
        await pilot.press("3")  # rating before reveal does nothing
        assert reviews(service) == []
        for key in ("1", "2", "3", "4"):
            await pilot.press("space")
            await pilot.press(key)
            await pilot.pause()
    rows = reviews(service)
    assert [r.rating for r in rows] == [1, 2, 3, 4]
    assert [r.question_id for r in rows] == order[:4]
    reference = Scheduler(enable_fuzzing=False)
    for row in rows:
        expected, _ = reference.review_card(Card(card_id=1, due=clock()), FR(row.rating), clock())
        stored = card_row(service, row.question_id)
        assert stored.due == expected.due and stored.stability == expected.stability


async def test_rating_bar_shows_the_intervals_the_scheduler_applies(make_app, service, clock):
    app = make_app(start_study=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        qid = app.screen.session.current
        await pilot.press("space")
        await pilot.pause()
        labels = {
            int(str(b.id).removeprefix("rate-")): str(b.label)
            for b in app.screen.query_one(RatingBar).query("Button")
        }
        await pilot.press("3")
        await pilot.pause()
    applied = card_row(service, qid).due - clock()
    assert labels[3] == f"3 Good {format_interval(applied)}"
    assert labels[1].startswith("1 Again ") and labels[4].startswith("4 Easy ")


async def test_undo_suspend_and_bury(make_app, service, clock):
    app = make_app(start_study=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        first = app.screen.session.current
        await pilot.press("space", "4")
        await pilot.pause()
        assert card_row(service, first).reps == 1
        await pilot.press("u")
        await pilot.pause()
        assert app.screen.session.current == first
        assert card_row(service, first) is None and reviews(service) == []
        await pilot.press("s")
        await pilot.pause()
        second = app.screen.session.current
        await pilot.press("b")
        await pilot.pause()
    assert card_row(service, first).suspended
    assert card_row(service, second).buried_until > clock()
    assert first not in service.queue() and second not in service.queue()
    clock.advance(timedelta(days=1))
    assert second in service.queue() and first not in service.queue()


async def test_filtered_session_only_shows_that_topic(make_app, service):
    app = make_app(start_study=True, filters=Filters(topics=("algo",)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.screen.session.queue == ["t-lru"]
        await pilot.press("space", "3")
        await pilot.pause()
    assert [r.question_id for r in reviews(service)] == ["t-lru"]


async def test_interview_session_replays_that_writeup(make_app, service, small_bank):
    interview = next(i for i in small_bank.interviews.values() if "algo-code-lru-cache" in i.themes)
    app = make_app(start_study=True, filters=Filters(interview=interview.id))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        queue = list(app.screen.session.queue)
    assert "t-lru" in queue
    for qid in queue:
        assert set(small_bank.questions[qid].themes) & set(interview.themes)


async def test_quit_mid_session_keeps_every_rating(make_app, service):
    app = make_app(start_study=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for _ in range(3):
            await pilot.press("space", "4")
            await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)
        assert "Cards reviewed   3" in str(app.screen.query_one("#summary").render())
        await app.action_quit()
    with service.sessions() as s:
        assert s.scalar(select(func.count()).select_from(ReviewRow)) == 3
        assert s.scalar(select(func.count()).select_from(CardRow)) == 3


async def test_cram_session_writes_nothing(make_app, service):
    app = make_app(start_study=True, cram=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for _ in range(3):
            await pilot.press("space", "1")
            await pilot.pause()
    assert reviews(service) == []


async def test_browse_search_and_suspend(make_app, service):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen)
        await pilot.press(*"topic:kv")
        await pilot.pause(0.3)  # the search waits for typing to stop
        await settle(pilot)
        assert [c.question.id for c in app.screen.shown] == ["t-kv"]
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert card_row(service, "t-kv").suspended
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not card_row(service, "t-kv").suspended


async def test_empty_queue_shows_summary_not_error(make_app, service):
    app = make_app(start_study=True, filters=Filters(topics=("moe",)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SummaryScreen)
        assert "Nothing due now" in str(app.screen.query_one("#summary").render())


async def test_preloaded_session_paints_its_first_card_at_once(make_app, service, small_bank):
    app = make_app(start_study=True)
    app.preload_study()  # what `quizzer study` does before the app runs
    expected = list(app.preloaded.queue)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StudyScreen) and screen.loaded
        assert screen.session.queue == expected
        question = str(screen.query_one("#question", Static).render())
        assert question == small_bank.questions[expected[0]].question
        await pilot.press("space", "3")
        await pilot.pause()
    assert [r.question_id for r in reviews(service)] == expected[:1]


async def test_preloaded_empty_queue_shows_summary(make_app):
    app = make_app(start_study=True, filters=Filters(topics=("moe",)))
    app.preload_study()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SummaryScreen)
        assert "Nothing due now" in str(app.screen.query_one("#summary").render())


def test_study_on_a_corrupt_database_is_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    code = entry(["--bank", str(FIXTURES / "small"), "--db", f"sqlite:///{bad}", "study"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "corrupt or not a quizzer database" in err
    assert "Traceback" not in err


async def test_large_terminal_shows_the_whole_card(make_app, service):
    app = make_app(start_study=True, filters=Filters(topics=("red",), difficulties=("hard",)))
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(pilot)
        await pilot.press("space")
        await settle(pilot)
        bar = app.screen.query_one(RatingBar)
        assert bar.display and bar.region.width > 100
        assert app.screen.query_one("#card").region.height > 30


async def test_app_opens_the_database_after_the_first_card(small_bank, clock, db_url):
    """Quick reads paint the first card; the app opens the database in the background."""
    from quizzer.db.engine import open_database

    open_database(db_url)  # an existing database, at the newest schema
    service = quick_service(db_url, small_bank, clock)
    sessions = service.sessions
    app = QuizzerApp(service, start_study=True)
    app.preload_study()
    assert not sessions.is_open
    first = app.preloaded.queue[0]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("space", "3")  # at once: waits for the open if it is still running
        await settle(pilot)
        assert sessions.is_open and service.quick is None
    assert [r.question_id for r in reviews(service)] == [first]
    assert card_row(service, first).reps == 1


def short_timeout_service(small_bank, clock, db_url, monkeypatch):
    """A service whose writes give up after 100 ms when another writer holds the lock."""
    from quizzer.db import engine
    from quizzer.review.service import ReviewService

    monkeypatch.setattr(engine, "BUSY_TIMEOUT_MS", 100)
    return ReviewService(
        engine.open_database(db_url),
        small_bank,
        clock=clock,
        scheduler=Scheduler(enable_fuzzing=False),
    )


def hold_write_lock(db_url: str):
    import sqlite3

    holder = sqlite3.connect(db_url.removeprefix("sqlite:///"))
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def error_messages(app) -> list[str]:
    return [n.message for n in app._notifications if n.severity == "error"]


async def test_a_locked_database_keeps_the_card_and_says_why(
    small_bank, clock, db_url, monkeypatch
):
    """Another writer holds the lock past the busy timeout: a message, the card stays up."""
    service = short_timeout_service(small_bank, clock, db_url, monkeypatch)
    app = QuizzerApp(service, start_study=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        first = app.screen.session.current
        await pilot.press("space")
        await pilot.pause()
        holder = hold_write_lock(db_url)
        await pilot.press("3")
        await pilot.pause()
        assert app.screen.session.current == first and app.screen.revealed
        assert any("Could not save the rating" in m and "locked" in m for m in error_messages(app))
        holder.rollback()
        holder.close()
        await pilot.press("3")
        await pilot.pause()
        assert app.screen.session.current != first
    assert [r.question_id for r in reviews(service)] == [first]


async def test_browse_on_a_locked_database_says_why_and_changes_nothing(
    small_bank, clock, db_url, monkeypatch
):
    service = short_timeout_service(small_bank, clock, db_url, monkeypatch)
    app = QuizzerApp(service)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press(*"topic:kv")
        await pilot.pause(0.3)  # the search waits for typing to stop
        await settle(pilot)
        holder = hold_write_lock(db_url)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert any("Could not suspend" in m for m in error_messages(app))
        assert isinstance(app.screen, BrowseScreen) and not app.screen.cards["t-kv"].suspended
        holder.rollback()
        holder.close()
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert card_row(service, "t-kv").suspended


async def test_the_limit_screen_says_so_and_offers_ten_more(make_service, small_bank):
    service = make_service(settings=StudySettings(new_per_day=1))
    service.rate("t-kv", Rating.EASY)  # today's one new card is used
    app = QuizzerApp(service, start_study=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SummaryScreen)
        text = str(app.screen.query_one("#summary").render())
        waiting = len(small_bank.questions) - 1
        assert "daily limit of 1 new card is reached" in text
        assert f"{waiting} more new cards are waiting" in text
        await pilot.click("#more-new")
        await settle(pilot)
        assert isinstance(app.screen, StudyScreen)
        assert app.screen.session.remaining.new == waiting  # fewer than ten are left
        assert "New 5" in str(app.screen.query_one("#progress").render())
        await pilot.press("space", "4")
        await settle(pilot)
    assert service.extra_new_today() == 10
    assert len([r for r in reviews(service) if r.state_before is None]) == 2


async def test_browse_reset_asks_first_and_ctrl_z_undoes_it(make_app, service):
    service.rate("t-kv", Rating.GOOD)
    rated = card_row(service, "t-kv").due
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press(*"topic:kv")  # typed into the search box, which keeps the focus
        await pilot.pause(0.3)  # the search waits for typing to stop
        await settle(pilot)
        await pilot.press("ctrl+x", "n")  # asked, declined
        await pilot.pause()
        assert card_row(service, "t-kv") is not None
        await pilot.press("ctrl+x", "y")
        await settle(pilot)
        assert card_row(service, "t-kv") is None
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert card_row(service, "t-kv").due == rated
        assert app.screen.cards["t-kv"].state != "new"
