"""One way for screens to turn a database failure into a message instead of a crash."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from textual.widget import Widget


@contextmanager
def reporting(widget: Widget, what: str) -> Iterator[None]:
    """A database, OS or input failure in the block becomes a message; the rest is skipped.

    Anything else is a bug and propagates.
    """
    try:
        yield
    except Exception as exc:
        from quizzer.db.errors import describe_db_error
        from quizzer.errors import QuizzerError

        reason = describe_db_error(exc)
        if reason is None and isinstance(exc, OSError | QuizzerError):
            reason = str(exc)
        if reason is None:
            raise
        widget.notify(f"Could not {what}: {reason}", severity="error", timeout=8, markup=False)
