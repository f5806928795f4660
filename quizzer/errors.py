"""Errors the user can cause. The CLI turns each into one line on stderr and an exit code."""

from __future__ import annotations


class QuizzerError(Exception):
    """A problem with the user's input or environment, not a bug."""

    exit_code = 2


class UnknownIdError(QuizzerError):
    """An id (company, topic, question, exercise...) that does not exist."""
