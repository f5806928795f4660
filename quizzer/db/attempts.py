"""Exercise attempts: what `--check` stores, and the best result per exercise."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quizzer.db.models import ExerciseAttemptRow


@dataclass(frozen=True, slots=True)
class Attempt:
    exercise: str
    track: str
    started_at: datetime
    duration_s: float
    device: str
    status: str
    passed: int
    failed: int
    errors: int
    skipped: int
    metrics: dict[str, tuple[float, str]]

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errors


def _attempt(row: ExerciseAttemptRow) -> Attempt:
    metrics = {k: (float(v[0]), str(v[1])) for k, v in json.loads(row.metrics or "{}").items()}
    return Attempt(
        row.exercise,
        row.track,
        row.started_at,
        row.duration_s,
        row.device,
        row.status,
        row.passed,
        row.failed,
        row.errors,
        row.skipped,
        metrics,
    )


class AttemptStore:
    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def record(self, attempt: Attempt) -> None:
        with self.sessions.begin() as session:
            session.add(
                ExerciseAttemptRow(
                    exercise=attempt.exercise,
                    track=attempt.track,
                    started_at=attempt.started_at,
                    duration_s=attempt.duration_s,
                    device=attempt.device,
                    status=attempt.status,
                    passed=attempt.passed,
                    failed=attempt.failed,
                    errors=attempt.errors,
                    skipped=attempt.skipped,
                    metrics=json.dumps({k: list(v) for k, v in attempt.metrics.items()}),
                )
            )

    def history(self, exercise: str) -> list[Attempt]:
        with self.sessions() as session:
            rows = session.scalars(
                select(ExerciseAttemptRow)
                .where(ExerciseAttemptRow.exercise == exercise)
                .order_by(ExerciseAttemptRow.started_at, ExerciseAttemptRow.id)
            ).all()
        return [_attempt(r) for r in rows]

    def best(self) -> dict[str, Attempt]:
        """Per exercise: a passing attempt if any (the fastest), else the most checks passed."""
        with self.sessions() as session:
            rows = session.scalars(select(ExerciseAttemptRow)).all()
        best: dict[str, Attempt] = {}
        for attempt in map(_attempt, rows):
            current = best.get(attempt.exercise)
            if current is None or _rank(attempt) > _rank(current):
                best[attempt.exercise] = attempt
        return best


def _rank(a: Attempt) -> tuple[bool, int, float]:
    return (a.status == "passed", a.passed, -a.duration_s)
