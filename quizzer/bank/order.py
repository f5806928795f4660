"""The order new cards are met in: breadth first over what interviews ask most.

1. Every theme gets its first card before any theme gets a second. A theme's first card is
   the one its `first:` field names, else its easiest. Themes rank by how many write-ups
   asked them: only the learner's companies' write-ups when companies are chosen (the
   rest break ties); write-ups of the learner's level count double.
   The chosen companies' cards all come before the others.
2. Within each such round, topics are interleaved: a topic's k-th card of the round counts
   for half as much as its (k-1)-th, so one large topic cannot fill a day.
3. The adjacent tracks (behavioural, applications, general algorithms and systems,
   classical vision) take one place in ten, unless the learner focuses on them. Focus
   topics, when set, come before everything else.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from quizzer.bank.model import DIFFICULTY_RANK, Bank, Question

# Which write-ups count double for each level (the data's interview types). Experienced
# hiring is barely present in the data, so for it every write-up counts the same.
LEVELS: dict[str, frozenset[str] | None] = {
    "intern": frozenset({"intern", "unstated"}),
    "new-grad": frozenset({"campus", "unstated"}),
    "experienced": None,
}
TOPIC_DECAY = 0.5
ADJACENT_EVERY = 10  # one new card in this many comes from the adjacent tracks


@dataclass(frozen=True, slots=True)
class Preferences:
    """What the learner prepares for: target companies, level and focus topics."""

    companies: tuple[str, ...] = ()
    level: str | None = None
    focus: tuple[str, ...] = ()


def theme_counts(bank: Bank, companies: Iterable[str] = (), level: str | None = None) -> Counter:
    """Write-ups that asked each theme, counting only `companies`' (all when empty); with a
    `level`, write-ups of that level's interview types count double."""
    wanted = set(companies)
    kinds = LEVELS.get(level) if level else None
    counts: Counter[str] = Counter()
    for interview in bank.interviews.values():
        if wanted and interview.company not in wanted:
            continue
        weight = 2 if kinds is not None and interview.type in kinds else 1
        for theme in set(interview.themes):
            counts[theme] += weight
    return counts


def asked_count(bank: Bank, question: Question, companies: Iterable[str] = ()) -> int:
    """Write-ups that asked any of the question's themes (by `companies` only, when given)."""
    wanted = set(companies)
    if not wanted:
        return question.times_asked
    return sum(question.asked_by.get(c, 0) for c in wanted)


def new_card_order(
    bank: Bank, questions: Sequence[Question], prefs: Preferences = Preferences()
) -> list[Question]:
    """`questions` in the order a learner with `prefs` should meet them (see module doc)."""
    primary = theme_counts(bank, prefs.companies, prefs.level)
    secondary = theme_counts(bank, (), prefs.level) if prefs.companies else primary
    # (asked by the chosen companies at all, how often): the companies' themes come first
    weight = {t: (1, primary[t]) if primary[t] else (0, secondary[t]) for t in bank.themes}
    focus = set(prefs.focus)

    def adjacent(q: Question) -> bool:
        if q.topic in focus:
            return False
        topic = bank.topics.get(q.topic)
        if topic is not None and topic.track == "adjacent":
            return True
        themes = [bank.themes[t] for t in q.themes if t in bank.themes]
        return bool(themes) and all(t.track == "adjacent" for t in themes)

    def grouped(qs: Sequence[Question]) -> list[Question]:
        if not prefs.companies:
            return _mixed(bank, qs, weight, adjacent)
        # the chosen companies' cards, all of them, before the rest
        asked = [q for q in qs if any(primary[t] for t in q.themes)]
        rest = [q for q in qs if not any(primary[t] for t in q.themes)]
        return _mixed(bank, asked, weight, adjacent) + _mixed(bank, rest, weight, adjacent)

    if focus:
        inside = [q for q in questions if q.topic in focus]
        return grouped(inside) + grouped([q for q in questions if q.topic not in focus])
    return grouped(questions)


def _mixed(
    bank: Bank,
    questions: Sequence[Question],
    weight: dict[str, tuple[int, int]],
    adjacent: Callable[[Question], bool],
) -> list[Question]:
    core = _breadth_first(bank, [q for q in questions if not adjacent(q)], weight)
    side = _breadth_first(bank, [q for q in questions if adjacent(q)], weight)
    out: list[Question] = []
    while core or side:
        take = side if (len(out) % ADJACENT_EVERY == ADJACENT_EVERY - 1 and side) else core
        out.append((take or side).pop(0))
    return out


def _breadth_first(
    bank: Bank, questions: Sequence[Question], weight: dict[str, tuple[int, int]]
) -> list[Question]:
    def within_theme(q: Question, theme: str) -> tuple[bool, int, str]:
        first = bank.themes[theme].first if theme in bank.themes else None
        return (q.id != first, DIFFICULTY_RANK.get(q.difficulty, 1), q.id)

    groups: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        for theme in q.themes or (f"#{q.id}",):  # a theme-less card is a group of its own
            groups[theme].append(q)
    for theme, members in groups.items():
        members.sort(key=lambda q, t=theme: within_theme(q, t))
        members.reverse()  # popped from the end
    picked: set[str] = set()
    source: dict[str, str] = {}  # card -> the theme it was taken for
    out: list[Question] = []
    while groups:
        round_: dict[str, tuple[tuple[int, int], Question]] = {}
        covered: set[str] = set()  # themes a card of this round already answers
        for theme in sorted(groups, key=lambda t: (weight.get(t, (0, 0)), t), reverse=True):
            members = groups[theme]
            while members and members[-1].id in picked:
                members.pop()
            if not members:
                del groups[theme]
                continue
            if theme in covered:
                continue
            q = members.pop()
            covered.update(q.themes)
            round_[q.id] = (weight.get(theme, (0, 0)), q)
            source[q.id] = theme
        # A card whose every theme another card of this round also answers waits a round.
        answering = Counter(t for _, q in round_.values() for t in q.themes)
        for qid, (_, q) in sorted(round_.items(), key=lambda item: (item[1][0], item[0])):
            if len(round_) > 1 and q.themes and all(answering[t] > 1 for t in q.themes):
                answering.subtract(q.themes)
                del round_[qid]
                groups[source[qid]].append(q)  # next in line for its theme again
        picked.update(round_)
        out += _interleave(list(round_.values()))
    return out


def _interleave(scored: list[tuple[tuple[int, int], Question]]) -> list[Question]:
    """Highest score first, where a topic's k-th pick counts TOPIC_DECAY**k of its count
    (the tier, asked by the chosen companies or not, is never decayed)."""
    by_topic: dict[str, list[tuple[tuple[int, int], Question]]] = defaultdict(list)
    for score, q in scored:
        by_topic[q.topic].append((score, q))
    for members in by_topic.values():
        members.sort(key=lambda sq: (-sq[0][0], -sq[0][1], sq[1].id))

    def entry(topic: str, k: int) -> tuple[int, float, str, str]:
        (tier, count), q = by_topic[topic][k]
        return (-tier, -count * TOPIC_DECAY**k, q.id, topic)

    heap = [entry(topic, 0) for topic in by_topic]
    heapq.heapify(heap)
    taken: Counter[str] = Counter()
    out: list[Question] = []
    while heap:
        topic = heapq.heappop(heap)[3]
        out.append(by_topic[topic][taken[topic]][1])
        taken[topic] += 1
        if taken[topic] < len(by_topic[topic]):
            heapq.heappush(heap, entry(topic, taken[topic]))
    return out
