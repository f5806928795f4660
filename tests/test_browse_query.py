"""The browse query: filters judged only once typed, and free text ranked by where it is."""

from __future__ import annotations

import pytest

from quizzer.review.browse import CardQuery, search_cards, state_label
from quizzer.review.model import CardInfo


@pytest.mark.parametrize(
    ("text", "terms", "error"),
    [
        ("state:sus", {"state": ("suspended",)}, None),  # still typing: the states it starts
        ("state:sus ", {}, "unknown state 'sus'"),
        ("state:re", {"state": ("review", "relearning")}, None),
        ("state:leech", {"state": ("leech",)}, None),
        ("foo:", {}, None),
        ("foo: kv", {}, "unknown filter 'foo:'"),
        ("topic:", {}, None),
        ("topic:kv paged", {"topic": ("kv",)}, None),
    ],
)
def test_a_filter_is_judged_once_its_token_is_complete(text, terms, error):
    query = CardQuery.parse(text)
    assert query.terms == terms
    if error is None:
        assert query.error is None
    else:
        assert query.error is not None and error in query.error


def new_cards(bank) -> list[CardInfo]:
    return [
        CardInfo(q, "new", None, None, None, None, None, 0, 0, False, None, False)
        for q in bank.questions.values()
    ]


def test_free_text_ranks_the_id_and_question_above_the_answer(clock):
    from quizzer.bank.cache import load_bank_cached

    cards = new_cards(load_bank_cached())
    found = search_cards(cards, CardQuery.parse("paged"), clock())
    assert len(found) > 10  # many answers mention it
    ids = [c.question.id for c in found]
    in_id = [i for i in ids if "paged" in i]
    only_answer = [
        c.question.id
        for c in found
        if "paged" not in (c.question.id + c.question.question).lower()
        and "paged" not in " ".join(c.question.key_points).lower()
    ]
    assert in_id and only_answer
    assert ids[: len(in_id)] == in_id  # every id match first
    assert max(ids.index(i) for i in in_id) < min(ids.index(i) for i in only_answer)


def test_state_label_says_suspended_buried_and_leech(service, clock):
    from datetime import timedelta

    from quizzer.review.model import Rating

    service.rate("t-kv", Rating.GOOD)
    service.suspend("t-kv", True)
    service.bury("t-lru")
    cards = service.cards()
    now = clock()
    assert state_label(cards["t-kv"], now) == "suspended"
    assert state_label(cards["t-lru"], now) == "buried"
    assert state_label(cards["t-lru"], now + timedelta(days=2)) == "new"


def test_the_preview_shows_a_code_block_under_its_language_alone(small_bank, clock):
    from quizzer.review.browse import describe_card

    q = small_bank.questions["t-code"]
    assert "```cuda fragment sm_90a" in q.answer
    card = CardInfo(q, "new", None, None, None, None, None, 0, 0, False, None, False)
    text = describe_card(small_bank, card, [], clock())
    assert "```cuda\n" in text and "fragment" not in text
