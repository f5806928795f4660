"""Errors the user can cause. The CLI turns each into one line on stderr and an exit code."""

from __future__ import annotations


class QuizzerError(Exception):
    """A problem with the user's input or environment, not a bug."""

    exit_code = 2


class UnknownIdError(QuizzerError):
    """An id (company, topic, question, exercise...) that does not exist."""


class CorruptCardError(QuizzerError):
    """A card row whose stored values cannot be a schedule (a damaged database)."""

    def __init__(self, question_id: str, reason: str) -> None:
        super().__init__(
            f"the stored schedule of '{question_id}' is damaged ({reason}); it is left out "
            "until the card is reset (browse, ctrl+x)"
        )
        self.question_id = question_id
        self.reason = reason
