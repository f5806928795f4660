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

LEARN_AHEAD = timedelta(minutes=20)


@dataclass(frozen=True, slots=True)
class Summary:
    reviewed: int
    again: int
    seconds: float
    next_due: datetime | None
    leeches: tuple[str, ...]
    cram: bool

    @property
    def again_rate(self) -> float:
        return self.again / self.reviewed if self.reviewed else 0.0


@dataclass
class StudySession:
    service: ReviewService
    filters: Filters = field(default_factory=Filters)
    cram: bool = False
    new_limit: int | None = None
    timer: Callable[[], float] = time.monotonic
    queue: list[str] = field(default_factory=list)
    done: list[tuple[str, RatingOutcome]] = field(default_factory=list)
    leeches: set[str] = field(default_factory=set)
    started: float = 0.0
    shown_at: float = 0.0

    def load(self) -> None:
        queue = self.service.queue(self.filters, cram=self.cram)
        if self.new_limit is not None:
            kept_new = 0
            limited = []
            for qid in queue:
                is_new = self.service.card(qid).state == "new"
                if is_new and kept_new >= self.new_limit:
                    continue
                kept_new += is_new
                limited.append(qid)
            queue = limited
        self.queue = queue
        self.started = self.timer()

    @property
    def current(self) -> str | None:
        return self.queue[0] if self.queue else None

    @property
    def position(self) -> tuple[int, int]:
        return len(self.done) + 1, len(self.done) + len(self.queue)

    def mark_shown(self) -> None:
        self.shown_at = self.timer()

    def rate(self, rating: Rating) -> RatingOutcome:
        qid = self.queue[0]
        elapsed_ms = int((self.timer() - self.shown_at) * 1000) if self.shown_at else None
        outcome = self.service.rate(qid, rating, duration_ms=elapsed_ms, cram=self.cram)
        self.queue.pop(0)  # only once the rating is stored: a failed one leaves the card up
        self.done.append((qid, outcome))
        if outcome.became_leech or self.service.card(qid).leech:
            self.leeches.add(qid)
        # Learning steps that fall due within the sitting come back in it, like any reviewer.
        soon = outcome.due <= self.service.clock() + LEARN_AHEAD
        if (self.cram and rating == Rating.AGAIN) or (not self.cram and soon):
            self.queue.append(qid)
        return outcome

    def undo(self) -> UndoResult | None:
        """Take back the last action of this sitting (rating, suspend or bury) and show
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
        if qid in self.queue:
            # a re-queued learning card: drop its later copy
            last = len(self.queue) - 1 - self.queue[::-1].index(qid)
            del self.queue[last]
        self.queue.insert(0, qid)
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
            self.queue.pop(0)
        return qid

    def skip(self) -> None:
        """Drop the current card from this sitting."""
        if self.queue:
            self.queue.pop(0)

    def summary(self) -> Summary:
        again = sum(1 for _, o in self.done if o.rating == Rating.AGAIN)
        dues = [o.due for _, o in self.done if not o.cram]
        return Summary(
            reviewed=len(self.done),
            again=again,
            seconds=self.timer() - self.started,
            next_due=min(dues) if dues else None,
            leeches=tuple(sorted(self.leeches)),
            cram=self.cram,
        )
