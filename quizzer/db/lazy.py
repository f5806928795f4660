"""A session factory that opens its database on first use, once, from whichever thread.

Commands hold one from the start; SQLAlchemy loads and migrations run only when a query
or a write first needs them.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker


class LazySessions:
    def __init__(self, url: str) -> None:
        self.url = url
        self._factory: sessionmaker[Session] | None = None
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        return self._factory is not None

    def factory(self) -> sessionmaker[Session]:
        if self._factory is None:
            with self._lock:
                if self._factory is None:
                    from quizzer.db.engine import open_database

                    self._factory = open_database(self.url)
        return self._factory

    def __call__(self) -> Session:
        return self.factory()()

    def begin(self) -> Any:
        return self.factory().begin()
