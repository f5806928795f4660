"""The reads a study queue needs, as an interface with two implementations.

`queries.OrmReads` runs them through SQLAlchemy on any database. `quizzer.db.quick`
runs the same reads with the standard library's sqlite3 driver, so the first card can be
shown before SQLAlchemy has loaded; a test holds the two to the same answers.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, TypeAlias


@dataclass(frozen=True, slots=True)
class CardRecord:
    """A card row's columns as a plain record (what the quick reads return)."""

    state: int
    step: int | None
    stability: float | None
    difficulty: float | None
    due: datetime
    last_review: datetime | None
    reps: int
    lapses: int
    suspended: bool
    buried_until: datetime | None
    leech: bool
    created_at: datetime


if TYPE_CHECKING:
    from quizzer.db.models import CardRow

    CardFields: TypeAlias = CardRecord | CardRow  # either kind of row; converters read both


class CardReads(Protocol):
    def counts_since(self, start: datetime) -> tuple[int, int]:
        """(reviews of started cards, new cards introduced) since `start`."""
        ...

    def review_counts_since(self, start: datetime) -> dict[int | None, int]:
        """Reviews since `start` by the card's state before them (None: it was new)."""
        ...

    def due_ids(
        self,
        now: datetime,
        ids: Collection[str] | None,
        limit: int | None,
        states: Collection[int] | None = None,
    ) -> list[str]:
        """Started cards due by `now` (in `states`, when given), lowest retrievability first."""
        ...

    def learning_cards(self, ids: Collection[str] | None) -> list[tuple[str, datetime]]:
        """Available cards in learning or relearning, with their due times, earliest first."""
        ...

    def settings(self, prefix: str) -> dict[str, str]:
        """Stored settings whose key starts with `prefix` (key -> JSON text)."""
        ...

    def count_due(self, now: datetime, ids: Collection[str] | None) -> int:
        """How many started cards are due by `now` (all states)."""
        ...

    def all_cards(self) -> dict[str, CardFields]:
        """Every stored card row by question id."""
        ...

    def studied_days(self, windows: Sequence[tuple[datetime, datetime]]) -> list[bool]:
        """For each [begin, end) window, whether any review falls in it."""
        ...

    def answer_counts(
        self, since: datetime, ids: Collection[str] | None, graduated: bool
    ) -> tuple[int, int]:
        """(answers, answers not rated Again) since `since`; `graduated`: only reviews of
        cards in review."""
        ...

    def not_new_ids(self, now: datetime) -> set[str]:
        """Cards that are started, suspended or buried: never offered as new."""
        ...

    def card(self, question_id: str) -> CardFields | None: ...

    def recorded(self, ids: Collection[str]) -> set[str]:
        """Those of `ids` with a card row or any review."""
        ...
