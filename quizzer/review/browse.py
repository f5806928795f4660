"""Search and filter cards for the browse screen: `paged topic:kv state:leech diff:hard`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from quizzer.bank.model import Bank
from quizzer.review.model import CardInfo, HistoryEntry, format_interval

STATES = ("new", "learning", "review", "relearning", "suspended", "leech")
KEYS = ("topic", "company", "tier", "state", "diff")


@dataclass(frozen=True)
class CardQuery:
    words: tuple[str, ...] = ()
    terms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    error: str | None = None

    @classmethod
    def parse(cls, text: str) -> CardQuery:
        words: list[str] = []
        terms: dict[str, list[str]] = {}
        error = None
        for token in text.split():
            key, sep, value = token.partition(":")
            if sep and key in KEYS and value:
                terms.setdefault(key, []).append(value.lower())
            elif sep and key and key not in KEYS and not value:
                error = f"unknown filter '{key}:'; use one of {', '.join(KEYS)}"
            else:
                words.append(token.lower())
        if "state" in terms and not set(terms["state"]) <= set(STATES):
            error = f"state is one of {', '.join(STATES)}"
        return cls(tuple(words), {k: tuple(v) for k, v in terms.items()}, error)


def _matches(card: CardInfo, query: CardQuery, bank: Bank | None) -> bool:
    q = card.question
    haystack = f"{q.id} {q.question} {q.answer}".lower()
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


def search_cards(
    cards: Iterable[CardInfo], query: CardQuery, now: datetime, bank: Bank | None = None
) -> list[CardInfo]:
    found = [c for c in cards if _matches(c, query, bank)]
    return sorted(found, key=lambda c: (c.state == "new", c.due or now, c.question.id))


def describe_card(bank: Bank, card: CardInfo, history: Sequence[HistoryEntry]) -> str:
    q = card.question
    lines = [f"## {q.id}", "", q.question, "", f"*{q.topic} · {q.difficulty} · {card.state}*"]
    if card.retrievability is not None:
        lines.append(f"Recall now: {card.retrievability:.0%} · lapses {card.lapses}")
    lines += ["", "### Answer", "", q.answer, "", "### History", ""]
    if history:
        lines += ["| date | rating | interval |", "|---|---|---|"]
        for h in history:
            when = h.reviewed_at.strftime("%Y-%m-%d %H:%M")
            lines.append(f"| {when} | {h.rating.label} | {format_interval(h.interval)} |")
    else:
        lines.append("Not reviewed yet.")
    return "\n".join(lines)
