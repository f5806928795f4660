"""The exercise manifest: ``exercises/catalog.yaml`` (order, status) plus each ``exercise.yaml``.

Nothing is read at import time; call :func:`load_catalog`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from quizzer.errors import QuizzerError, UnknownIdError, unknown_message
from quizzer.paths import exercises_root

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_PACKAGE_DIR = Path(__file__).resolve().parent.parent


class ExerciseError(QuizzerError, ValueError):
    """A problem with an exercise name, the catalog or a workspace; one line for the user."""


class UnknownExerciseError(UnknownIdError, ExerciseError):
    """A name that is not in the catalog (including anything path-like, e.g. ``../x``)."""


class ExerciseNotReadyError(ExerciseError):
    """A planned exercise: named in the catalog, not written yet."""


class CatalogError(ExerciseError):
    """catalog.yaml or an exercise.yaml is missing or malformed."""


def exercises_dir() -> Path:
    """The folder holding catalog.yaml (see `quizzer.paths.exercises_root`)."""
    return exercises_root()


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Track(_Strict):
    """One version of an exercise (e.g. numba or CUDA C++): the file the user edits.

    ``cpu: compile-only`` says the track's code cannot run without a GPU: on a CPU its
    grader only compiles and inspects it, so a clean run there is not a pass.
    """

    name: str
    file: str
    cpu: Literal["run", "compile-only"] = "run"

    @field_validator("file")
    @classmethod
    def _plain_file_name(cls, value: str) -> str:
        if Path(value).name != value or value.startswith("."):
            raise ValueError(f"track file must be a plain file name, got {value!r}")
        return value


class Mutant(_Strict):
    file: str
    expect: str
    track: str | None = None


class ExerciseMeta(_Strict):
    """The contents of ``exercise.yaml``."""

    title: str
    topic: str
    themes: list[str] = Field(default_factory=list)
    companies: list[str] = Field(default_factory=list)
    difficulty: Literal["easy", "medium", "hard"]
    minutes: int = Field(gt=0)
    devices: list[Literal["cpu", "cuda"]]
    timeout_s: float = Field(gt=0)
    tracks: list[Track] = Field(min_length=1)
    hints: list[str] = Field(default_factory=list)
    mutants: list[Mutant] = Field(default_factory=list)


class Exercise(BaseModel):
    """A ready exercise: its folder and metadata."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    path: Path
    meta: ExerciseMeta

    @property
    def title(self) -> str:
        return self.meta.title

    @property
    def readme(self) -> Path:
        return self.path / "README.md"

    @property
    def grader_dir(self) -> Path:
        return self.path / "grader"

    @property
    def default_track(self) -> Track:
        return self.meta.tracks[0]

    def track(self, name: str | None = None) -> Track:
        """The named track (the first one when ``name`` is None)."""
        if name is None:
            return self.default_track
        for track in self.meta.tracks:
            if track.name == name:
                return track
        known = ", ".join(t.name for t in self.meta.tracks)
        raise ExerciseError(f"exercise {self.name!r} has no track {name!r} (tracks: {known})")

    def starter_file(self, track: str | None = None) -> Path:
        return self.path / "starter" / self.track(track).file

    def solution_file(self, track: str | None = None) -> Path:
        return self.path / "solution" / self.track(track).file

    def mutant_file(self, mutant: Mutant) -> Path:
        return self.path / "solution" / "mutants" / mutant.file


class CatalogEntry(_Strict):
    name: str
    status: Literal["ready", "planned"]

    @field_validator("name")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not NAME_RE.match(value):
            raise ValueError(f"exercise names are lowercase slugs, got {value!r}")
        return value


class Catalog:
    """Ordered catalog entries; ready ones load their ``exercise.yaml`` on first use."""

    def __init__(self, root: Path, entries: list[CatalogEntry]) -> None:
        self.root = root
        self.entries = entries
        self._by_name = {entry.name: entry for entry in entries}

    def __iter__(self) -> Iterator[CatalogEntry]:
        return iter(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    @cached_property
    def names(self) -> list[str]:
        return [entry.name for entry in self.entries]

    def entry(self, name: str) -> CatalogEntry:
        """The entry for ``name``; anything unknown (``../x`` included) raises."""
        entry = self._by_name.get(name) if isinstance(name, str) else None
        if entry is None:
            ready = ", ".join(e.name for e in self.entries if e.status == "ready")
            message = unknown_message(
                "exercise", str(name), self.names, otherwise=f"ready: {ready}"
            )
            raise UnknownExerciseError(message)
        return entry

    def get(self, name: str) -> Exercise:
        """The ready exercise called ``name``."""
        entry = self.entry(name)
        if entry.status != "ready":
            raise ExerciseNotReadyError(f"exercise {name!r} is planned but not available yet")
        return load_exercise(self.root / name, name)

    def ready(self) -> list[Exercise]:
        return [self.get(e.name) for e in self.entries if e.status == "ready"]


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CatalogError(f"{where}: invalid YAML: {problem}") from None


def _invalid(path: Path, exc: ValidationError) -> CatalogError:
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return CatalogError(f"{path}: {loc}: {first['msg']}{more}")


def load_exercise(folder: Path, name: str | None = None) -> Exercise:
    """Load ``folder/exercise.yaml``."""
    meta_path = folder / "exercise.yaml"
    data = _read_yaml(meta_path)
    try:
        meta = ExerciseMeta.model_validate(data)
    except ValidationError as exc:
        raise _invalid(meta_path, exc) from None
    return Exercise(name=name or folder.name, path=folder, meta=meta)


def load_catalog(root: Path | None = None) -> Catalog:
    """Read ``catalog.yaml`` from ``root`` (default :func:`exercises_dir`)."""
    root = root or exercises_dir()
    path = root / "catalog.yaml"
    data = _read_yaml(path)
    if not isinstance(data, list):
        raise CatalogError(f"{path}: expected a list of exercises")
    entries: list[CatalogEntry] = []
    seen: set[str] = set()
    for index, item in enumerate(data):
        try:
            entry = CatalogEntry.model_validate(item)
        except ValidationError as exc:
            raise CatalogError(f"{path}: entry {index + 1}: {exc.errors()[0]['msg']}") from None
        if entry.name in seen:
            raise CatalogError(f"{path}: exercise {entry.name!r} is listed twice")
        seen.add(entry.name)
        entries.append(entry)
    return Catalog(root, entries)


def get_exercise(name: str, root: Path | None = None) -> Exercise:
    """Shortcut: ``load_catalog(root).get(name)``."""
    return load_catalog(root).get(name)
