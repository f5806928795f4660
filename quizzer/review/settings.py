"""Study settings: daily limits, the scheduler's parameters and what the learner aims at.

They live in the database (the `settings` table, one row per name under ``study.``), so
they follow the database from machine to machine. Each has a text form for `quizzer
config`; a bad value raises `SettingError` with one line saying what is allowed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, NamedTuple

from quizzer.errors import QuizzerError

PREFIX = "study."
LEVELS = ("intern", "new-grad", "experienced")
# The settings the first-run setup asks for; once any is stored, setup has been done.
AIMS = ("companies", "level", "focus")

PLAN_TARGET_KEY = "plan.target"  # the study plan's target (see quizzer.review.plan)


class SettingError(QuizzerError):
    """A setting name or value that cannot be used."""


class FittedParameters(NamedTuple):
    """FSRS parameters fitted by `quizzer optimize`, with what they were fitted on."""

    values: tuple[float, ...]  # the scheduler's parameter vector (21 for FSRS-6)
    reviews: int  # reviews the fit used
    fitted_on: str  # ISO date of the fit (UTC)

    def describe(self) -> str:
        """'fitted on N reviews, DATE'."""
        return f"fitted on {self.reviews:,} reviews, {self.fitted_on}"


@dataclass(frozen=True, slots=True)
class StudySettings:
    """Every study setting, with Anki's defaults where Anki has one."""

    new_per_day: int = 20
    reviews_per_day: int = 200
    desired_retention: float = 0.9
    learning_steps: tuple[timedelta, ...] = (timedelta(minutes=1), timedelta(minutes=10))
    relearning_steps: tuple[timedelta, ...] = (timedelta(minutes=10),)
    learn_ahead: timedelta = timedelta(minutes=20)
    leech_threshold: int = 8
    day_starts_at: int = 4
    companies: tuple[str, ...] = ()
    level: str | None = None
    focus: tuple[str, ...] = ()
    parameters: FittedParameters | None = None  # None: the fsrs package's defaults


@dataclass(frozen=True, slots=True)
class Spec:
    """How one setting is parsed from text, shown, stored and explained."""

    field: str
    help: str
    parse: Callable[[str], Any]
    show: Callable[[Any], str]


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(s|m|h|d)$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> timedelta:
    """'90s', '10m', '1.5h', '2d' -> timedelta."""
    match = _DURATION.match(text.strip().lower())
    if not match:
        raise SettingError(f"'{text}' is not a duration (use e.g. 30s, 10m, 2h, 1d)")
    return timedelta(seconds=float(match.group(1)) * _UNIT[match.group(2)])


def show_duration(delta: timedelta) -> str:
    seconds = delta.total_seconds()
    for unit in ("d", "h", "m"):
        if seconds >= _UNIT[unit] and seconds % _UNIT[unit] == 0:
            return f"{int(seconds // _UNIT[unit])}{unit}"
    return f"{seconds:g}s"


def _int_in(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise SettingError(f"'{text}' is not a whole number") from None
        if not low <= value <= high:
            raise SettingError(f"{value} is out of range ({low} to {high})")
        return value

    return parse


def _retention(text: str) -> float:
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise SettingError(f"'{text}' is not a number (use e.g. 0.9 or 90%)") from None
    if not 0.7 <= value <= 0.99:
        raise SettingError(f"{value:g} is out of range (0.70 to 0.99)")
    return round(value, 4)


def _steps(text: str) -> tuple[timedelta, ...]:
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    steps = tuple(parse_duration(p) for p in parts)
    if any(step.total_seconds() < 1 or step >= timedelta(days=1) for step in steps):
        raise SettingError("each step must be at least 1s and less than 1d")
    return steps


def _ahead(text: str) -> timedelta:
    value = parse_duration(text)
    if value > timedelta(hours=12):
        raise SettingError("learn-ahead is at most 12h")
    return value


def _ids(text: str) -> tuple[str, ...]:
    if text.strip().lower() in ("", "none"):
        return ()
    return tuple(dict.fromkeys(p for p in re.split(r"[\s,]+", text.strip().lower()) if p))


def _level(text: str) -> str | None:
    value = text.strip().lower()
    if value in ("", "none", "any"):
        return None
    if value not in LEVELS:
        raise SettingError(f"unknown level '{text}' (use {', '.join(LEVELS)} or none)")
    return value


SPECS: dict[str, Spec] = {
    "new-per-day": Spec("new_per_day", "new cards introduced per day", _int_in(0, 9999), str),
    "reviews-per-day": Spec(
        "reviews_per_day", "reviews of graduated cards per day", _int_in(0, 99999), str
    ),
    "desired-retention": Spec(
        "desired_retention",
        "share of reviews you aim to recall (higher: shorter intervals)",
        _retention,
        lambda v: f"{v:g}",
    ),
    "learning-steps": Spec(
        "learning_steps",
        "delays before a new card graduates",
        _steps,
        lambda v: " ".join(map(show_duration, v)) or "none",
    ),
    "relearning-steps": Spec(
        "relearning_steps",
        "delays after a lapse before the card is back in review",
        _steps,
        lambda v: " ".join(map(show_duration, v)) or "none",
    ),
    "learn-ahead": Spec(
        "learn_ahead",
        "how early a learning card may be shown when nothing else is left",
        _ahead,
        show_duration,
    ),
    "leech-threshold": Spec(
        "leech_threshold", "lapses after which a card is flagged a leech", _int_in(1, 99), str
    ),
    "day-starts-at": Spec(
        "day_starts_at", "local hour a new study day starts", _int_in(0, 23), lambda v: f"{v}"
    ),
    "companies": Spec(
        "companies",
        "target companies: their interviews decide what you learn first",
        _ids,
        lambda v: ", ".join(v) or "none",
    ),
    "level": Spec(
        "level", f"the hiring you prepare for ({', '.join(LEVELS)})", _level, lambda v: v or "none"
    ),
    "focus": Spec(
        "focus", "topics whose new cards come first", _ids, lambda v: ", ".join(v) or "none"
    ),
}
# Set by `quizzer optimize`, not by `quizzer config set`: stored under PREFIX like the rest.
PARAMETERS = "parameters"
_BY_FIELD = {spec.field: name for name, spec in SPECS.items()} | {PARAMETERS: PARAMETERS}


def spec(name: str) -> Spec:
    """The setting called `name`; an unknown name lists the known ones."""
    if name not in SPECS:
        raise SettingError(f"unknown setting '{name}' (known: {', '.join(SPECS)})")
    return SPECS[name]


def to_stored(value: Any) -> str:
    """A setting value as the JSON text the settings table holds."""
    if isinstance(value, timedelta):
        return json.dumps(value.total_seconds())
    if isinstance(value, tuple):
        return json.dumps([v.total_seconds() if isinstance(v, timedelta) else v for v in value])
    return json.dumps(value)


def from_rows(rows: Mapping[str, str]) -> StudySettings:
    """Settings from the table's rows (key -> JSON text); unreadable values keep defaults."""
    changes: dict[str, Any] = {}
    for key, text in rows.items():
        name = key.removeprefix(PREFIX)
        if not key.startswith(PREFIX) or name not in _BY_FIELD.values():
            continue
        field = SPECS[name].field if name in SPECS else name
        try:
            changes[field] = _decode(field, json.loads(text))
        except (ValueError, TypeError):
            continue  # a damaged value: the default is safer than a crash
    return replace(StudySettings(), **changes)


def _decode(field: str, raw: Any) -> Any:
    if field == PARAMETERS:
        return None if raw is None else _fitted(raw)
    if field == "learn_ahead":
        return timedelta(seconds=float(raw))
    if field in ("learning_steps", "relearning_steps"):
        return tuple(timedelta(seconds=float(v)) for v in raw)
    if field in ("companies", "focus"):
        return tuple(str(v) for v in raw)
    if field == "level":
        return None if raw is None else str(raw)
    if field == "desired_retention":
        return float(raw)
    return int(raw)


def _fitted(raw: Any) -> FittedParameters:
    """Stored [values, reviews, date] back to FittedParameters; ValueError if unusable."""
    from fsrs.scheduler import LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS

    values, reviews, fitted_on = raw
    values = tuple(float(v) for v in values)
    bounds = zip(values, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS, strict=False)
    if len(values) != len(LOWER_BOUNDS_PARAMETERS) or not all(
        lo <= v <= hi for v, lo, hi in bounds
    ):
        raise ValueError("parameters the scheduler cannot use")
    return FittedParameters(values, int(reviews), str(fitted_on))


def describe(settings: StudySettings) -> list[tuple[str, str, str]]:
    """(name, value as text, what it does) for every setting, in a stable order."""
    return [(name, s.show(getattr(settings, s.field)), s.help) for name, s in SPECS.items()]


def name_of(field: str) -> str:
    """The setting name for a StudySettings field."""
    return _BY_FIELD[field]


def parse_changes(
    current: StudySettings, texts: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Form text (setting name -> text) to the changed fields, and one error line per bad name.

    Only values that differ from `current` are returned; nothing is saved here.
    """
    changes: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for name, text in texts.items():
        chosen = spec(name)
        try:
            value = chosen.parse(text)
        except SettingError as exc:
            errors[name] = str(exc)
            continue
        if value != getattr(current, chosen.field):
            changes[chosen.field] = value
    return changes, errors
