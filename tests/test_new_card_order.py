"""The order new cards are met in, on the real bank and a fresh database."""

from __future__ import annotations

import itertools

import pytest
from fsrs import Scheduler

from quizzer.bank.loader import load_bank
from quizzer.bank.model import Bank, Filters
from quizzer.bank.order import Preferences, asked_count, new_card_order, theme_counts
from quizzer.db.engine import open_database
from quizzer.review.service import ReviewService
from quizzer.review.settings import StudySettings


@pytest.fixture(scope="module")
def bank() -> Bank:
    return load_bank()


def fresh_service(bank: Bank, tmp_path, clock, **settings: object) -> ReviewService:
    return ReviewService(
        open_database(f"sqlite:///{tmp_path / 'order.db'}"),
        bank,
        clock=clock,
        settings=StudySettings(**settings),  # type: ignore[arg-type]
        scheduler=Scheduler(enable_fuzzing=False),
    )


def test_day_one_spans_the_core_and_few_behavioural_cards(bank, tmp_path, clock):
    first = fresh_service(bank, tmp_path, clock).queue()
    assert len(first) == 20
    cards = [bank.questions[q] for q in first]
    assert len({q.topic for q in cards}) >= 8
    assert len({t for q in cards for t in q.themes}) >= 15
    assert sum(q.topic == "proj" for q in cards) <= 2
    adjacent = {t.id for t in bank.topics.values() if t.track == "adjacent"}
    assert sum(q.topic in adjacent for q in cards) <= 2


def test_every_core_theme_gets_a_card_before_any_theme_gets_a_second(bank):
    order = new_card_order(bank, list(bank.questions.values()))
    core = [q for q in order if bank.topics[q.topic].track == "core"]
    core = [q for q in core if not all(bank.themes[t].track == "adjacent" for t in q.themes)]
    themes = {t for q in core for t in q.themes}
    seen: set[str] = set()
    for q in core:
        if q.themes and seen.issuperset(q.themes):  # a theme's second card
            assert seen >= themes, f"{q.id} comes before {sorted(themes - seen)[:3]}"
            break
        seen.update(q.themes)
    else:
        pytest.fail("no theme has a second card")


def test_a_theme_starts_with_the_card_named_first(bank):
    named = [t for t in bank.themes.values() if t.first]
    assert len(named) > 100
    for theme in named:
        members = [q for q in bank.questions.values() if q.themes == (theme.id,)]
        first = bank.questions[theme.first]
        if first in members and len(members) > 1 and first.difficulty != "easy":
            order = new_card_order(bank, members)
            assert order[0].id == theme.first  # before easier cards of the theme
            return
    pytest.fail("no theme names a harder card first")


def test_topics_are_interleaved(bank):
    order = new_card_order(bank, list(bank.questions.values()))[:20]
    runs = max(sum(1 for _ in group) for _, group in itertools.groupby(q.topic for q in order))
    assert runs <= 2


def test_company_session_ranks_by_that_companys_counts(bank, tmp_path, clock):
    service = fresh_service(bank, tmp_path, clock)
    ranked = service.queue(Filters(companies=("nvidia",)))
    asked = [asked_count(bank, bank.questions[q], ["nvidia"]) for q in ranked]
    assert len(ranked) == 20 and all(n > 0 for n in asked)
    big = "bytedance"
    ranked = new_card_order(bank, list(bank.questions.values()), Preferences((big,)))
    counts = theme_counts(bank, [big])
    top_theme = max((t for t in bank.themes), key=lambda t: (counts[t], t))
    assert top_theme in ranked[0].themes or ranked[0].topic != bank.themes[top_theme].topic
    best = max(counts[t] for t in ranked[0].themes)
    assert best == max(counts[t] for q in ranked for t in q.themes if q.topic == ranked[0].topic)


def test_settings_companies_steer_the_order_without_a_filter(bank, tmp_path, clock):
    service = fresh_service(bank, tmp_path, clock, companies=("nvidia",))
    assert all(bank.questions[q].asked_by.get("nvidia") for q in service.queue())


def test_focus_topics_come_first(bank, tmp_path, clock):
    service = fresh_service(bank, tmp_path, clock, focus=("kv", "serv"))
    assert {bank.questions[q].topic for q in service.queue()} == {"kv", "serv"}


def test_focus_on_an_adjacent_topic_lifts_it(bank):
    order = new_card_order(bank, list(bank.questions.values()), Preferences(focus=("proj",)))
    assert all(q.topic == "proj" for q in order[:6])


def test_write_ups_of_the_learners_level_count_double(bank):
    everyone = theme_counts(bank)
    interns = theme_counts(bank, level="intern")
    campus = [i for i in bank.interviews.values() if i.type == "campus"]
    intern = [i for i in bank.interviews.values() if i.type == "intern"]
    assert campus and intern
    theme = next(t for t in intern[0].themes if all(t not in i.themes for i in campus))
    asked = sum(theme in i.themes for i in bank.interviews.values())
    assert everyone[theme] == asked
    assert interns[theme] == asked + sum(
        theme in i.themes for i in bank.interviews.values() if i.type in ("intern", "unstated")
    )
    assert theme_counts(bank, level="experienced") == everyone


def test_asked_count_is_the_companys_own(bank):
    q = max(bank.questions.values(), key=lambda q: q.times_asked)
    assert asked_count(bank, q) == q.times_asked
    company = q.companies[0]
    assert asked_count(bank, q, [company]) == q.asked_by[company] < q.times_asked
