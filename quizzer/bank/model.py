"""Domain objects of the bank: what the rest of quizzer sees (never YAML, never ORM rows).

They have no ``__slots__``: the bank cache unpickles about 2,400 of them at every start, and
without slots pickle restores each one's ``__dict__`` in C instead of calling the dataclass's
Python ``__setstate__`` (a few milliseconds of the first frame)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")
DIFFICULTY_RANK = {name: rank for rank, name in enumerate(DIFFICULTIES)}


@dataclass(frozen=True)
class Company:
    id: str
    name: str
    tier: str
    interviews: int


@dataclass(frozen=True)
class Topic:
    id: str
    name: str
    interviews: int
    track: str = "core"  # core | adjacent (behavioural and neighbouring fields)


@dataclass(frozen=True)
class Theme:
    id: str
    topic: str
    text: str
    coding: bool
    interviews: int
    asked_by: dict[str, int]
    track: str = "core"
    first: str | None = None  # the question a learner should meet first on this theme
    line: int = 0  # where it is defined in themes.yaml


@dataclass(frozen=True)
class Interview:
    id: str
    company: str
    tier: str
    type: str
    round: str | None
    themes: tuple[str, ...]


@dataclass(frozen=True)
class Reference:
    title: str
    url: str


@dataclass(frozen=True)
class Question:
    id: str
    topic: str
    difficulty: str
    question: str
    answer: str
    key_points: tuple[str, ...]
    follow_ups: tuple[str, ...] = ()
    references: tuple[Reference, ...] = ()
    themes: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    exercise: str | None = None
    explicit_companies: tuple[str, ...] = ()
    # Derived from the interview data: company id -> write-ups that asked one of the themes.
    asked_by: dict[str, int] = field(default_factory=dict)
    interviews: tuple[str, ...] = ()
    source: str = ""
    line: int = 0

    @property
    def companies(self) -> tuple[str, ...]:
        """Companies that ask this question, most frequent first."""
        return tuple(sorted(self.asked_by, key=lambda c: (-self.asked_by[c], c)))

    @property
    def first_id(self) -> str:
        """The id this question was first published under (aliases list former ids, oldest
        first): what identities that must survive renames, like Anki note GUIDs, come from."""
        return self.aliases[0] if self.aliases else self.id

    @property
    def times_asked(self) -> int:
        return len(self.interviews)


@dataclass(frozen=True)
class Filters:
    """Which questions a command works on; empty means no restriction."""

    companies: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    interview: str | None = None
    difficulties: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (
            self.companies or self.topics or self.tiers or self.interview or self.difficulties
        )


@dataclass
class Bank:
    companies: dict[str, Company]
    topics: dict[str, Topic]
    themes: dict[str, Theme]
    interviews: dict[str, Interview]
    questions: dict[str, Question]
    exercises: dict[str, str] = field(default_factory=dict)  # name -> ready | planned
    aliases: dict[str, str] = field(default_factory=dict)  # old id -> current id

    def resolve(self, question_id: str) -> str | None:
        if question_id in self.questions:
            return question_id
        return self.aliases.get(question_id)

    def get(self, question_id: str) -> Question | None:
        resolved = self.resolve(question_id)
        return self.questions.get(resolved) if resolved else None

    def tier_of(self, question: Question) -> set[str]:
        return {self.companies[c].tier for c in question.asked_by if c in self.companies}

    def select(self, filters: Filters) -> list[Question]:
        """Questions matching every given filter, in bank order."""
        allowed_themes: set[str] | None = None
        if filters.interview:
            allowed_themes = set(self.interviews[filters.interview].themes)
        out = []
        for q in self.questions.values():
            if filters.topics and q.topic not in filters.topics:
                continue
            if filters.difficulties and q.difficulty not in filters.difficulties:
                continue
            if filters.companies and not any(c in q.asked_by for c in filters.companies):
                continue
            if filters.tiers and not (self.tier_of(q) & set(filters.tiers)):
                continue
            if allowed_themes is not None and not allowed_themes.intersection(q.themes):
                continue
            out.append(q)
        return out

    def asked_summary(self, question: Question, top: int = 3) -> str:
        """'ByteDance x3, Alibaba, Baidu +4': who asks it, most frequent first."""
        names = []
        for company in question.companies[:top]:
            name = self.companies[company].name if company in self.companies else company
            count = question.asked_by[company]
            names.append(f"{name} x{count}" if count > 1 else name)
        more = len(question.asked_by) - top
        return ", ".join(names) + (f" +{more}" if more > 0 else "")

    def counts(self) -> dict[str, int]:
        return {
            "questions": len(self.questions),
            "companies": len(self.companies),
            "topics": len(self.topics),
            "themes": len(self.themes),
            "interviews": len(self.interviews),
        }


def asked_by_for(themes: Iterable[str], interviews: Iterable[Interview]) -> tuple[Counter, list]:
    """Each write-up that asked any of `themes` counts once for its company."""
    wanted = set(themes)
    counter: Counter[str] = Counter()
    ids = []
    for interview in interviews:
        if wanted.intersection(interview.themes):
            counter[interview.company] += 1
            ids.append(interview.id)
    return counter, ids
