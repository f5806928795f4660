"""Pydantic schemas for the YAML files of a bank: the edge where text becomes data."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

SLUG = r"^[a-z0-9][a-z0-9-]*[a-z0-9]$"
Difficulty = Literal["easy", "medium", "hard"]
Track = Literal["core", "adjacent"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class CompanyRecord(_Strict):
    id: str = Field(pattern=SLUG)
    name: str
    tier: str
    interviews: int = Field(ge=0)


class TopicRecord(_Strict):
    id: str = Field(pattern=r"^[a-z0-9-]+$")
    name: str
    interviews: int = Field(ge=0)
    track: Track = "core"


class ThemeRecord(_Strict):
    id: str = Field(pattern=SLUG)
    topic: str
    theme: str
    coding: bool = False
    interviews: int = Field(ge=0)
    asked_by: dict[str, int] = Field(default_factory=dict)
    track: Track | None = None  # None: the topic's track
    first: str | None = Field(default=None, pattern=SLUG)  # the question to learn first


class InterviewRecord(_Strict):
    id: str = Field(pattern=SLUG)
    company: str
    tier: str
    type: str
    round: str | None = None
    themes: list[str] = Field(default_factory=list)


class Reference(_Strict):
    title: str = Field(min_length=3)
    url: str = Field(pattern=r"^https?://\S+$")


class QuestionRecord(_Strict):
    id: str = Field(pattern=SLUG)
    aliases: list[str] = Field(default_factory=list)
    topic: str
    themes: list[str] = Field(default_factory=list)
    companies: list[str] = Field(default_factory=list)
    difficulty: Difficulty
    question: str = Field(min_length=10)
    answer: str = Field(min_length=20)
    key_points: list[str] = Field(min_length=1)
    follow_ups: list[str] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    exercise: str | None = None

    @field_validator("key_points", "follow_ups")
    @classmethod
    def _no_blank_items(cls, items: list[str]) -> list[str]:
        if any(not item.strip() for item in items):
            raise ValueError("items must not be blank")
        return items


class CatalogEntry(_Strict):
    name: str = Field(pattern=SLUG)
    status: Literal["ready", "planned"]
