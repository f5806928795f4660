"""One fuzz draw per card state, so the interval a button previews is the one applied.

The fsrs scheduler fuzzes intervals with the process-wide ``random()``; a preview and the
rating that follows would each draw their own number. `seeded` makes every draw inside it
come from a generator seeded by the card's identity and state, per thread: the preview and
the rating of the same card in the same state draw the same fuzz.
"""

from __future__ import annotations

import random
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

_local = threading.local()
_installed = False
_lock = threading.Lock()


def _draw() -> float:
    generator = getattr(_local, "generator", None)
    return generator.random() if generator is not None else random.random()


def install() -> None:
    """Route the fsrs scheduler's fuzz draws through `_draw` (idempotent)."""
    global _installed
    if _installed:
        return
    with _lock:
        import fsrs.scheduler

        fsrs.scheduler.random = _draw  # type: ignore[attr-defined]
        _installed = True


def seed_for(question_id: str, rating: int, last_review: datetime | None, step: int | None) -> int:
    """A stable seed for one (card state, rating) pair."""
    stamp = last_review.isoformat() if last_review else "new"
    return zlib.crc32(f"{question_id}|{rating}|{stamp}|{step}".encode())


@contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Inside this block, this thread's fuzz draws come from `Random(seed)`."""
    install()
    previous = getattr(_local, "generator", None)
    _local.generator = random.Random(seed)
    try:
        yield
    finally:
        _local.generator = previous
