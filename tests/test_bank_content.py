"""Quality gates of the built-in bank: coverage of the interview themes, no near-duplicates,
and the shape every answer must have."""

from __future__ import annotations

import itertools
import re

import pytest

from quizzer.bank.code_blocks import plain_fences
from quizzer.bank.loader import check_bank

PART_1 = (
    "gpu",
    "perf",
    "gemm",
    "red",
    "smx",
    "fa",
    "attn",
    "fuse",
    "prec",
    "hw",
    "pt",
    "cpp",
    "sys",
)
PART_2 = (
    "inf",
    "kv",
    "serv",
    "pd",
    "spec",
    "quant",
    "moe",
    "comm",
    "dist",
    "arch",
    "rl",
    "ml",
    "app",
    "algo",
    "proj",
)
NEAR_DUPLICATE = 0.55  # Jaccard similarity of normalized question word sets


@pytest.fixture(scope="module")
def bank():
    bank, problems = check_bank()
    assert problems == [], problems[:5]
    return bank


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - {
        "the",
        "a",
        "an",
        "and",
        "of",
        "in",
        "to",
        "is",
        "you",
        "how",
        "what",
        "why",
        "do",
        "would",
        "your",
        "does",
        "it",
        "its",
        "for",
        "on",
        "with",
        "are",
        "when",
        "which",
        "this",
        "that",
        "be",
        "can",
    }


@pytest.mark.parametrize("part", [PART_1, PART_2], ids=["part1", "part2"])
def test_every_theme_is_covered(bank, part):
    answered = {t for q in bank.questions.values() for t in q.themes}
    approach = {t for q in bank.questions.values() for t in q.themes}
    gaps = []
    for theme in bank.themes.values():
        if theme.topic not in part:
            continue
        if theme.coding and theme.id not in approach:
            gaps.append(f"coding theme without an approach card: {theme.id}")
        elif not theme.coding and theme.id not in answered:
            gaps.append(f"knowledge theme not answered: {theme.id}")
    assert not gaps, "\n".join(gaps)


def test_parts_are_large_enough(bank):
    by_topic = [q.topic for q in bank.questions.values()]
    assert sum(t in PART_1 for t in by_topic) >= 160
    assert sum(t in PART_2 for t in by_topic) >= 170
    assert len(bank.questions) >= 330


def test_no_near_duplicate_questions(bank):
    items = [(q.id, _words(q.question)) for q in bank.questions.values()]
    close = []
    for (a, wa), (b, wb) in itertools.combinations(items, 2):
        if wa and wb and len(wa & wb) / len(wa | wb) >= NEAR_DUPLICATE:
            close.append(f"{a} ~ {b}")
    assert not close, "near-duplicate questions:\n" + "\n".join(close)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            "What is warp divergence, what does it cost, and how do you avoid it?",
            "What is warp divergence, what does it cost, and how do you reduce it?",
        ),
        (
            "What is global-memory coalescing, and how do you make a kernel's accesses coalesced?",
            "What does memory coalescing mean on a modern NVIDIA GPU, and how do you make a"
            " kernel's global accesses coalesced?",
        ),
    ],
)
def test_near_duplicate_rule_catches_reworded_questions(first, second):
    a, b = _words(first), _words(second)
    assert len(a & b) / len(a | b) >= NEAR_DUPLICATE


def test_every_question_has_shape(bank):
    bad = []
    for q in bank.questions.values():
        words = len(plain_fences(q.answer).split())  # info-string tags are not prose
        if len(q.key_points) < 3:
            bad.append(f"{q.id}: {len(q.key_points)} key points")
        if not 80 <= words <= 350:
            bad.append(f"{q.id}: answer has {words} words")
    assert not bad, "\n".join(bad)


def test_references_on_at_least_90_percent(bank):
    with_refs = sum(1 for q in bank.questions.values() if q.references)
    assert with_refs / len(bank.questions) >= 0.9


def test_linked_exercises_exist_in_catalog(bank):
    for q in bank.questions.values():
        if q.exercise:
            assert q.exercise in bank.exercises
