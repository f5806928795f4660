"""Small user settings stored as JSON values (target companies, exercise hint progress...)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from quizzer.db.models import SettingRow


class SettingsStore:
    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def get(self, key: str, default: Any = None) -> Any:
        with self.sessions() as session:
            row = session.get(SettingRow, key)
            return json.loads(row.value) if row else default

    def set(self, key: str, value: Any) -> None:
        with self.sessions.begin() as session:
            row = session.get(SettingRow, key)
            if row is None:
                session.add(SettingRow(key=key, value=json.dumps(value)))
            else:
                row.value = json.dumps(value)
