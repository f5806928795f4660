"""Search and filter cards for the browse screen: `paged topic:kv state:leech diff:hard`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from quizzer.bank.code_blocks import plain_fences
from quizzer.bank.model import Bank
from quizzer.review.model import CardInfo, HistoryEntry, format_interval

STATES = ("new", "learning", "review", "relearning", "suspended", "leech")
KEYS = ("topic", "company", "tier", "state", "diff")


@dataclass(frozen=True)
class CardQuery:
    """Free-text words and `key:value` filters; `error` says what is wrong with a filter.

    A token still being typed (the last one, with no space after it) is never an error:
    `state:sus` filters by the states it starts, and an unknown `foo:` waits for the
    space that completes it.
    """

    words: tuple[str, ...] = ()
    terms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    error: str | None = None

    @classmethod
    def parse(cls, text: str) -> CardQuery:
        """The query typed so far (`text` ends mid-token while the user types)."""
        words: list[str] = []
        terms: dict[str, list[str]] = {}
        error = None
        tokens = text.split()
        typing = bool(tokens) and not text[-1:].isspace()
        for index, token in enumerate(tokens):
            last = typing and index == len(tokens) - 1
            key, sep, value = token.partition(":")
            value = value.lower()
            if sep and key in KEYS and value:
                if key == "state" and value not in STATES:
                    started = [s for s in STATES if s.startswith(value)]
                    if last and started:
                        terms.setdefault(key, []).extend(started)
                    elif not last:
                        error = f"unknown state '{value}'; use one of {', '.join(STATES)}"
                    continue
                terms.setdefault(key, []).append(value)
            elif sep and key and not value and not last:
                if key not in KEYS:
                    error = f"unknown filter '{key}:'; use one of {', '.join(KEYS)}"
            elif sep and key in KEYS:
                continue  # `topic:` being typed: nothing to filter by yet
            elif sep and key and not value:
                continue
            else:
                words.append(token.lower())
        return cls(tuple(words), {k: tuple(v) for k, v in terms.items()}, error)


def state_label(card: CardInfo, now: datetime) -> str:
    """What the card is now: suspended, buried, leech, or its FSRS state."""
    if card.suspended:
        return "suspended"
    if card.buried_until and card.buried_until > now:
        return "buried"
    if card.leech:
        return "leech"
    return card.state


def _matches(card: CardInfo, query: CardQuery, bank: Bank | None) -> bool:
    q = card.question
    haystack = f"{q.id} {q.question} {' '.join(q.key_points)} {q.answer}".lower()
    if any(word not in haystack for word in query.words):
        return False
    terms = query.terms
    if "topic" in terms and q.topic not in terms["topic"]:
        return False
    if "company" in terms and not set(terms["company"]) & set(q.asked_by):
        return False
    if "diff" in terms and q.difficulty not in terms["diff"]:
        return False
    if "tier" in terms and bank is not None:
        tiers = {t.lower() for t in bank.tier_of(q)}
        if not tiers & set(terms["tier"]):
            return False
    if "state" in terms:
        states = {card.state}
        states |= {"suspended"} if card.suspended else set()
        states |= {"leech"} if card.leech else set()
        if not states & set(terms["state"]):
            return False
    return True


# Where a word is found counts for this much: the id, then the question, key points, answer.
FIELD_WEIGHTS = (8.0, 4.0, 2.0, 1.0)


def relevance(card: CardInfo, words: Sequence[str]) -> float:
    """How well the card answers the words: by the field each is found in, a whole word
    counting more than a part of one."""
    q = card.question
    fields = (q.id.lower(), q.question.lower(), " ".join(q.key_points).lower(), q.answer.lower())
    score = 0.0
    for word in words:
        whole = re.compile(rf"\b{re.escape(word)}\b")
        for weight, text in zip(FIELD_WEIGHTS, fields, strict=True):
            if word in text:
                score += weight * (2 if whole.search(text) else 1)
                break
    return score


def search_cards(
    cards: Iterable[CardInfo], query: CardQuery, now: datetime, bank: Bank | None = None
) -> list[CardInfo]:
    """The matching cards: with words, the most relevant first; else due first, new last."""
    found = [c for c in cards if _matches(c, query, bank)]
    found.sort(key=lambda c: (c.state == "new", c.due or now, c.question.id))
    if query.words:
        found.sort(key=lambda c: -relevance(c, query.words))  # stable: ties keep due order
    return found


def describe_card(
    bank: Bank, card: CardInfo, history: Sequence[HistoryEntry], now: datetime
) -> str:
    """The card as Markdown: question, its real state, recall, answer and history."""
    q = card.question
    state = state_label(card, now)
    lines = [f"## {q.id}", "", q.question, "", f"*{q.topic} · {q.difficulty} · {state}*"]
    if card.retrievability is not None:
        lines.append(f"Recall now: {card.retrievability:.0%} · lapses {card.lapses}")
    lines += ["", "### Answer", "", plain_fences(q.answer), "", "### History", ""]
    if history:
        lines += ["| date | rating | interval |", "|---|---|---|"]
        for h in history:
            when = h.reviewed_at.strftime("%Y-%m-%d %H:%M")
            lines.append(f"| {when} | {h.rating.label} | {format_interval(h.interval)} |")
    else:
        lines.append("Not reviewed yet.")
    return "\n".join(lines)
