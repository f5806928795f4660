"""Small user settings stored as JSON values (target companies, exercise hint progress...)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from quizzer.db.models import SettingRow


class SettingsStore:
    """Get and set JSON values by key, one short transaction each."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def get(self, key: str, default: Any = None) -> Any:
        with self.sessions() as session:
            row = session.get(SettingRow, key)
            return json.loads(row.value) if row else default

    def set(self, key: str, value: Any) -> None:
        """Store `value` (anything JSON can hold) under `key`."""
        self.set_text(key, json.dumps(value))

    def set_text(self, key: str, text: str) -> None:
        """Store JSON text as it is under `key`."""
        with self.sessions.begin() as session:
            row = session.get(SettingRow, key)
            if row is None:
                session.add(SettingRow(key=key, value=text))
            else:
                row.value = text
