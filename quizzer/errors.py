"""Errors the user can cause. The CLI turns each into one line on stderr and an exit code."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

# The command that lists the valid ids of each kind.
LISTED_BY = {
    "company": "quizzer companies",
    "tier": "quizzer companies",
    "topic": "quizzer topics",
    "interview": "quizzer interviews",
    "question": "quizzer list",
    "exercise": "quizzer exercise",
    "setting": "quizzer config",
    "command": "quizzer --help",
}
SHOWN_LENGTH = 60  # a pasted paragraph is cut, so the error stays one readable line


class QuizzerError(Exception):
    """A problem with the user's input or environment, not a bug."""

    exit_code = 2


class UnknownIdError(QuizzerError):
    """An id (company, topic, question, exercise...) that does not exist."""


def _shown(value: str) -> str:
    """The value quoted as Python would, so a newline or tab in it stays on one line."""
    cut = value if len(value) <= SHOWN_LENGTH else value[: SHOWN_LENGTH - 3] + "..."
    return repr(cut)


def nearest(value: str, known: Iterable[str]) -> str | None:
    """The known name closest to `value`, or None when none is close enough."""
    close = difflib.get_close_matches(value, list(known), n=1, cutoff=0.5)
    return close[0] if close else None


def unknown_message(
    kind: str,
    value: str,
    known: Iterable[str],
    see: str | None = None,
    otherwise: str | None = None,
) -> str:
    """``unknown KIND 'VALUE' (did you mean 'X'?); see COMMAND`` as one line: the value as
    typed, the nearest known one (or `otherwise` in its place), and the command that lists
    the valid ones."""
    close = nearest(value, known)
    hint = f" (did you mean {_shown(close)}?)" if close else ""
    if not close and otherwise:
        hint = f" ({otherwise})"
    listed = see or LISTED_BY.get(kind)
    tail = f"; see {listed}" if listed else ""
    return f"unknown {kind} {_shown(value)}{hint}{tail}"


class CorruptCardError(QuizzerError):
    """A card row whose stored values cannot be a schedule (a damaged database)."""

    def __init__(self, question_id: str, reason: str) -> None:
        super().__init__(
            f"the stored schedule of '{question_id}' is damaged ({reason}); it is left out "
            "until the card is reset (browse, ctrl+x)"
        )
        self.question_id = question_id
        self.reason = reason
