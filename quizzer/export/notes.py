"""One exported note per question: fields, tags and deck, shared by both formats."""

from __future__ import annotations

import html
from dataclasses import dataclass

from quizzer.bank.model import Bank, Question
from quizzer.export.render import render_list, render_markdown

ROOT_DECK = "AI Infra Interview"
FIELDS = (
    "Id",
    "Question",
    "Answer",
    "KeyPoints",
    "FollowUps",
    "Companies",
    "Topic",
    "References",
)


@dataclass(frozen=True, slots=True)
class ExportNote:
    question_id: str
    fields: tuple[str, ...]
    tags: tuple[str, ...]
    deck: str


def _tag(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_:." else "_" for ch in text)


def tags_for(bank: Bank, q: Question) -> tuple[str, ...]:
    tags = [f"topic::{_tag(q.topic)}", f"difficulty::{q.difficulty}"]
    tags += [f"company::{_tag(c)}" for c in sorted(q.asked_by)]
    tags += [f"tier::{_tag(t)}" for t in sorted(bank.tier_of(q))]
    if q.exercise:
        tags += ["exercise", f"exercise::{_tag(q.exercise)}"]
    return tuple(tags)


def _companies(bank: Bank, q: Question) -> str:
    if not q.asked_by:
        return ""
    parts = []
    for company in q.companies:
        name = bank.companies[company].name if company in bank.companies else company
        count = q.asked_by[company]
        parts.append(html.escape(name) + (f" &times;{count}" if count > 1 else ""))
    total = f"Asked in {q.times_asked} interview(s): " if q.times_asked else "Asked at: "
    return total + ", ".join(parts)


def _references(q: Question) -> str:
    items = [
        f'<a href="{html.escape(r.url, quote=True)}">{html.escape(r.title)}</a>'
        for r in q.references
    ]
    return "<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>" if items else ""


def build_note(bank: Bank, q: Question) -> ExportNote:
    topic = bank.topics[q.topic].name if q.topic in bank.topics else q.topic
    fields = (
        html.escape(q.id),
        render_markdown(q.question),
        render_markdown(q.answer),
        render_list(q.key_points),
        render_list(q.follow_ups),
        _companies(bank, q),
        html.escape(topic),
        _references(q),
    )
    deck = f"{ROOT_DECK}::{topic.replace('::', ':')}"
    return ExportNote(q.id, fields, tags_for(bank, q), deck)
