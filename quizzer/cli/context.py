"""The factory: builds the collaborators every command (and the TUI) is handed."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from quizzer.bank.model import Bank
    from quizzer.db.lazy import LazySessions
    from quizzer.review.service import ReviewService


@dataclass
class Settings:
    """The global options: which database, and which extra question folders."""

    db_url: str | None = None
    extra_banks: tuple[Path, ...] = ()

    @property
    def resolved_db_url(self) -> str:
        """The database in use: ``--db``, else ``$QUIZZER_DB``, else the default file.

        A plain path means an SQLite file. Only the default location's folder is created;
        an explicit path must name an existing folder.
        """
        url = self.chosen_db_url
        if self.db_url or os.environ.get("QUIZZER_DB"):
            return url
        from quizzer.paths import user_data_dir

        user_data_dir().mkdir(parents=True, exist_ok=True)
        return url

    @property
    def chosen_db_url(self) -> str:
        """The URL `resolved_db_url` gives, worked out without creating any folder."""
        from quizzer.db.target import resolve_url

        chosen = self.db_url or os.environ.get("QUIZZER_DB")
        if chosen:
            return resolve_url(chosen)
        from quizzer.paths import default_db_url

        return default_db_url()


@dataclass
class AppContext:
    """Lazily built bank, database and services, shared by one command."""

    settings: Settings
    _bank: Bank | None = field(default=None, init=False)
    _sessions: LazySessions | None = field(default=None, init=False)

    @property
    def bank(self) -> Bank:
        if self._bank is None:
            from quizzer.bank.cache import load_bank_cached

            self._bank = load_bank_cached(extra=self.settings.extra_banks)
        return self._bank

    @property
    def sessions(self) -> LazySessions:
        """The database; it opens (and migrates) when a query first needs it."""
        if self._sessions is None:
            from quizzer.db.lazy import LazySessions

            url = self.settings.resolved_db_url
            from quizzer.db.target import is_in_memory

            if is_in_memory(url):
                import sys

                print(
                    "warning: an in-memory database: nothing you do is kept after quizzer exits",
                    file=sys.stderr,
                )
            self._sessions = LazySessions(url)
        return self._sessions

    def review_service(self, *, quick: bool = False) -> ReviewService:
        """The review service; `quick` lets its first reads run before SQLAlchemy loads."""
        from quizzer.review.service import ReviewService

        reads = None
        if quick:
            from quizzer.db.quick import QuickReader

            reads = QuickReader.open(self.sessions.url)
        return ReviewService(self.sessions, self.bank, quick=reads)
