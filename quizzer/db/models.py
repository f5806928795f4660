"""ORM rows. Only the db package and the converters see these; screens never do."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, Float, Index, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from quizzer.db.types import UTCDateTime


class Base(DeclarativeBase):
    pass


class CardRow(Base):
    """Scheduling state of one question, keyed by its stable id. No row means new."""

    __tablename__ = "cards"

    question_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    state: Mapped[int] = mapped_column(Integer, default=1)  # fsrs.State
    step: Mapped[int | None] = mapped_column(Integer, nullable=True)
    stability: Mapped[float | None] = mapped_column(Float, nullable=True)
    difficulty: Mapped[float | None] = mapped_column(Float, nullable=True)
    due: Mapped[datetime] = mapped_column(UTCDateTime())
    last_review: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    reps: Mapped[int] = mapped_column(Integer, default=0)
    lapses: Mapped[int] = mapped_column(Integer, default=0)
    suspended: Mapped[bool] = mapped_column(Boolean, default=False)
    buried_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    leech: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (Index("ix_cards_due", "due"),)


class ReviewRow(Base):
    """One rating. `card_before` is the JSON snapshot undo restores (null: card was new)."""

    __tablename__ = "reviews"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    question_id: Mapped[str] = mapped_column(String(200))
    rating: Mapped[int] = mapped_column(Integer)
    reviewed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    duration_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    state_before: Mapped[int | None] = mapped_column(Integer, nullable=True)
    state_after: Mapped[int] = mapped_column(Integer)
    stability: Mapped[float | None] = mapped_column(Float, nullable=True)
    difficulty: Mapped[float | None] = mapped_column(Float, nullable=True)
    due_after: Mapped[datetime] = mapped_column(UTCDateTime())
    card_before: Mapped[str | None] = mapped_column(Text, nullable=True)

    __table_args__ = (
        Index("ix_reviews_reviewed_at", "reviewed_at"),
        Index("ix_reviews_question", "question_id", "reviewed_at"),
    )


class ExerciseAttemptRow(Base):
    __tablename__ = "exercise_attempts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    exercise: Mapped[str] = mapped_column(String(100), index=True)
    track: Mapped[str] = mapped_column(String(50))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    duration_s: Mapped[float] = mapped_column(Float)
    device: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(20))
    passed: Mapped[int] = mapped_column(Integer, default=0)
    failed: Mapped[int] = mapped_column(Integer, default=0)
    errors: Mapped[int] = mapped_column(Integer, default=0)
    skipped: Mapped[int] = mapped_column(Integer, default=0)
    metrics: Mapped[str] = mapped_column(Text, default="{}")  # JSON: name -> [value, unit]


class SettingRow(Base):
    __tablename__ = "settings"

    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(Text)  # JSON
