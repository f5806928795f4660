"""One study sitting: the queue, what was rated, undo, and the end-of-session summary.

Pure logic over the review service, so the study screen only renders and forwards keys.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from quizzer.bank.model import Filters
from quizzer.review.model import Rating, RatingOutcome
from quizzer.review.service import ReviewService
from quizzer.review.undo import UndoResult


@dataclass(frozen=True, slots=True)
class Remaining:
    """What is left of a sitting, as Anki counts it: new, learning and review cards."""

    new: int
    learning: int
    review: int


@dataclass(frozen=True, slots=True)
class Summary:
    reviewed: int
    again: int
    seconds: float
    next_due: datetime | None
    leeches: tuple[str, ...]
    cram: bool
    new_held_back: int = 0  # new cards today's limit kept out (0: the limit did not stop it)
    new_per_day: int = 0

    @property
    def again_rate(self) -> float:
        return self.again / self.reviewed if self.reviewed else 0.0

    @property
    def limit_reached(self) -> bool:
        """The sitting ended because of the new-card limit, with new cards still waiting."""
        return self.new_held_back > 0


@dataclass
class StudySession:
    """One sitting. Learning cards (from this sitting or an earlier one) are shown when
    due, before anything else; then reviews, then new cards; a learning card is shown
    early, within the learn-ahead limit, only when nothing else is left."""

    service: ReviewService
    filters: Filters = field(default_factory=Filters)
    cram: bool = False
    new_limit: int | None = None
    timer: Callable[[], float] = time.monotonic
    queue: list[str] = field(default_factory=list)  # reviews, then new cards
    learning: dict[str, datetime] = field(default_factory=dict)  # id -> due
    kinds: dict[str, str] = field(default_factory=dict)  # id -> new | review (queue cards)
    done: list[tuple[str, RatingOutcome]] = field(default_factory=list)
    leeches: set[str] = field(default_factory=set)
    new_held_back: int = 0
    started: float = 0.0
    shown_at: float = 0.0
    _current: str | None = None

    def load(self) -> None:
        parts = self.service.queue_parts(self.filters, cram=self.cram, new_limit=self.new_limit)
        self.queue = parts.reviews + parts.new
        self.kinds = {qid: "review" for qid in parts.reviews} | {q: "new" for q in parts.new}
        self.learning = dict(parts.learning)
        self.new_held_back = parts.new_held_back
        self._current = None
        self.started = self.timer()

    @property
    def current(self) -> str | None:
        """The card on screen: it stays the same until it is rated, set aside or undone."""
        if self._current is None:
            self._current = self._pick()
        return self._current

    def _pick(self) -> str | None:
        now = self.service.clock()
        if self.learning:
            qid, due = min(self.learning.items(), key=lambda item: (item[1], item[0]))
            if due <= now:
                return qid
        if self.queue:
            return self.queue[0]
        if self.learning and due <= now + self.service.settings.learn_ahead:
            return qid
        return None

    @property
    def remaining(self) -> Remaining:
        """New, learning and review cards left in this sitting (the card shown included)."""
        horizon = self.service.clock() + self.service.settings.learn_ahead
        new = sum(1 for q in self.queue if self.kinds.get(q) == "new")
        learning = sum(1 for due in self.learning.values() if due <= horizon)
        return Remaining(new, learning, len(self.queue) - new)

    def mark_shown(self) -> None:
        self.shown_at = self.timer()

    def _drop(self, qid: str) -> None:
        if qid in self.queue:
            self.queue.remove(qid)
        self.learning.pop(qid, None)
        self._current = None

    def rate(self, rating: Rating) -> RatingOutcome:
        qid = self.current
        if qid is None:
            raise ValueError("no card to rate")
        elapsed_ms = int((self.timer() - self.shown_at) * 1000) if self.shown_at else None
        outcome = self.service.rate(qid, rating, duration_ms=elapsed_ms, cram=self.cram)
        self._drop(qid)  # only once the rating is stored: a failed one leaves the card up
        self.done.append((qid, outcome))
        if outcome.became_leech or (not self.cram and self.service.card(qid).leech):
            self.leeches.add(qid)
        if self.cram:
            if rating == Rating.AGAIN:
                self.queue.append(qid)
                self.kinds.setdefault(qid, "review")
        elif outcome.state in ("learning", "relearning") and outcome.interval < timedelta(days=1):
            self.learning[qid] = outcome.due  # an intraday step: back in this sitting when due
        return outcome

    def undo(self) -> UndoResult | None:
        """Take back the last action (rating, suspend, bury, or a reset in browse) and show
        that card again. A stale undo (the card changed elsewhere) keeps the sitting as is."""
        result = self.service.undo()
        if result is None or not result.undone:
            return result
        qid = result.question_id
        rated = [i for i, (q, _) in enumerate(self.done) if q == qid]
        if result.kind == "rate" and rated:
            _, outcome = self.done.pop(rated[-1])
            if outcome.became_leech:
                self.leeches.discard(qid)
        if result.kind in ("rate", "suspend", "bury"):
            self._drop(qid)
            self.queue.insert(0, qid)
            self.kinds.setdefault(qid, "review")
            self._current = qid
        return result

    def suspend(self) -> str | None:
        """Suspend the current card and move on; undo brings it back."""
        return self._set_aside(self.service.suspend)

    def bury(self) -> str | None:
        """Bury the current card until tomorrow and move on; undo brings it back."""
        return self._set_aside(self.service.bury)

    def _set_aside(self, action: Callable[[str], None]) -> str | None:
        qid = self.current
        if qid is not None:
            action(qid)  # stored first: a refused write leaves the card up
            self._drop(qid)
        return qid

    def skip(self) -> None:
        """Drop the current card from this sitting."""
        qid = self.current
        if qid is not None:
            self._drop(qid)

    def add_new(self, count: int) -> int:
        """Custom study: `count` more new cards today (this sitting's number when it was
        set with ``--new``). Returns how many joined the sitting."""
        if self.new_limit is not None:
            self.new_limit += count
        else:
            self.service.add_new_today(count)
        parts = self.service.queue_parts(self.filters, new_limit=self.new_limit)
        seen = set(self.queue) | {q for q, _ in self.done} | set(self.learning)
        added = [q for q in parts.new if q not in seen][:count]
        self.queue += added
        self.kinds.update({q: "new" for q in added})
        self.new_held_back = max(0, parts.new_held_back)
        self._current = None
        return len(added)

    def summary(self) -> Summary:
        again = sum(1 for _, o in self.done if o.rating == Rating.AGAIN)
        held_back = self.new_held_back if not self.cram and self.new_limit is None else 0
        if any(self.kinds.get(q) == "new" for q in self.queue):
            held_back = 0  # ended early: today's new cards are not all seen, no limit was met
        return Summary(
            reviewed=len(self.done),
            again=again,
            seconds=self.timer() - self.started,
            next_due=None if self.cram else self.service.next_due(self.filters),
            leeches=tuple(sorted(self.leeches)),
            cram=self.cram,
            new_held_back=held_back,
            new_per_day=self.service.settings.new_per_day,
        )
