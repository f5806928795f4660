"""One exported note per question: fields, tags and deck, shared by both formats."""

from __future__ import annotations

import html
import multiprocessing
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from quizzer.bank.model import Bank, Question
from quizzer.export.render import render_list, render_markdown

# A worker process (a fork: ~10 ms) pays off from ~100 notes on (~1 ms a note).
MIN_NOTES_PER_WORKER = 100
MAX_WORKERS = 8

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


# Anki plays `[sound:x]` and acts on `[anki:...]` tags wherever they appear in a field.
_MEDIA_TAG = re.compile(r"\[(?=\s*/?\s*(?:sound|anki)\s*:)", re.IGNORECASE)


def inert(field: str) -> str:
    """The field with Anki's media tags made plain text: `[sound:x]` shows, never plays."""
    return _MEDIA_TAG.sub("&#91;", field) if "[" in field else field


@dataclass(frozen=True, slots=True)
class ExportNote:
    question_id: str
    guid_source: str  # the question's first id, so a renamed question keeps its note
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
    noun = "write-up" if q.times_asked == 1 else "write-ups"
    total = (
        f"Its themes came up in {q.times_asked} interview {noun}: "
        if q.times_asked
        else "Asked at: "
    )
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
    fields = tuple(inert(field) for field in fields)
    deck = f"{ROOT_DECK}::{topic.replace('::', ':')}"
    return ExportNote(q.id, q.first_id, fields, tags_for(bank, q), deck)


def fork_is_safe() -> bool:
    """Forking copies only the calling thread, so a process with others (Python's or a
    native library's) could leave a lock held in the child: fork only when alone."""
    if not sys.platform.startswith("linux") or multiprocessing.current_process().daemon:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def default_workers(notes: int) -> int:
    """One process per CPU, when each gets at least `MIN_NOTES_PER_WORKER` notes."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cpus or 1, MAX_WORKERS, notes // MIN_NOTES_PER_WORKER))


# What a forked worker builds from: inherited from the parent at fork, never pickled.
_work: tuple[Bank, Sequence[Question]] | None = None


def _start_worker(bank: Bank, questions: Sequence[Question]) -> None:
    global _work
    _work = (bank, questions)


def _build_range(bounds: tuple[int, int]) -> list[ExportNote]:
    assert _work is not None
    bank, questions = _work
    return [build_note(bank, q) for q in questions[bounds[0] : bounds[1]]]


def build_notes(
    bank: Bank, questions: Sequence[Question], *, workers: int | None = None
) -> list[ExportNote]:
    """`build_note` for every question, in order, in up to `workers` forked processes
    (default: `default_workers`; one where forking is not safe). A note is a pure function
    of its question and the bank, so the notes are the same whatever the number."""
    if workers is None:
        workers = default_workers(len(questions))
    if workers <= 1 or len(questions) < 2 or not fork_is_safe():
        return [build_note(bank, q) for q in questions]
    size = -(-len(questions) // (workers * 4))  # a few ranges a worker, to even out the load
    ranges = [(i, min(i + size, len(questions))) for i in range(0, len(questions), size)]
    context = multiprocessing.get_context("fork")
    with context.Pool(workers, initializer=_start_worker, initargs=(bank, questions)) as pool:
        return [note for part in pool.map(_build_range, ranges, chunksize=1) for note in part]
