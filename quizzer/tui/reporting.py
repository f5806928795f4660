"""One way for screens to turn a database failure into a message instead of a crash."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from textual.widget import Widget

T = TypeVar("T")


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


def read_then_show(
    widget: Widget, what: str, read: Callable[[], T], show: Callable[[T], object]
) -> bool:
    """In a thread worker: `read()`, then `show(result)` on the app's thread.

    Any failure of the read is a message (the app stays up); returns whether it worked.
    """
    try:
        result = read()
    except Exception as exc:
        widget.app.call_from_thread(
            widget.app.notify, f"Could not {what}: {exc}", severity="error", markup=False
        )
        return False
    widget.app.call_from_thread(show, result)
    return True
