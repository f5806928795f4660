"""The factory: builds the collaborators every command (and the TUI) is handed."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.orm import sessionmaker

    from quizzer.bank.model import Bank
    from quizzer.review.service import ReviewService


@dataclass
class Settings:
    db_url: str | None = None
    extra_banks: tuple[Path, ...] = ()

    @property
    def resolved_db_url(self) -> str:
        from quizzer.paths import default_db_url

        return self.db_url or os.environ.get("QUIZZER_DB") or default_db_url()


@dataclass
class AppContext:
    """Lazily built bank, database and services, shared by one command."""

    settings: Settings
    _bank: Bank | None = field(default=None, init=False)
    _sessions: sessionmaker | None = field(default=None, init=False)

    @property
    def bank(self) -> Bank:
        if self._bank is None:
            from quizzer.bank.cache import load_bank_cached

            self._bank = load_bank_cached(extra=self.settings.extra_banks)
        return self._bank

    @property
    def sessions(self) -> sessionmaker:
        if self._sessions is None:
            from quizzer.db.engine import open_database

            self._sessions = open_database(self.settings.resolved_db_url)
        return self._sessions

    def review_service(self, **options: object) -> ReviewService:
        from quizzer.review.service import ReviewService

        return ReviewService(self.sessions, self.bank, **options)  # type: ignore[arg-type]
