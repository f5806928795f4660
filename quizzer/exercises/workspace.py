"""The user's workspace: ``~/quizzer-exercises/<name>/`` holding the starter file and README.

The user's work is never overwritten. ``.quizzer-starter.sha256`` records the hash of every
file as it was scaffolded; a file whose content still has that hash is pristine and may be
refreshed from a newer starter, any other file is the user's and is kept. ``reset`` puts the
starter back after saving the user's file under ``.quizzer-backups/<timestamp>/``.

Nothing is written through a symbolic link: an exercise folder, a file in it or the backup
folder that is a link (dangling or not), or that resolves outside the workspace, is refused
with one line and nothing is written; files are opened with ``O_NOFOLLOW``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from quizzer.exercises.catalog import Catalog, Exercise, ExerciseError, load_catalog

MANIFEST = ".quizzer-starter.sha256"
BACKUPS = ".quizzer-backups"


class WorkspaceError(ExerciseError):
    """A workspace that cannot be used (e.g. a file where a folder should be)."""


def default_root() -> Path:
    """``QUIZZER_WORKSPACE`` if set, else ``~/quizzer-exercises``."""
    override = os.environ.get("QUIZZER_WORKSPACE")
    return Path(override).expanduser() if override else Path.home() / "quizzer-exercises"


@dataclass(frozen=True)
class Workspace:
    """Where one exercise lives for the user."""

    exercise: Exercise
    root: Path

    @property
    def path(self) -> Path:
        return self.root / self.exercise.name

    def file(self, track: str | None = None) -> Path:
        """The file the user edits (and the runner grades) for ``track``."""
        return self.path / self.exercise.track(track).file


@dataclass
class ScaffoldResult:
    workspace: Workspace
    file: Path  # the file to edit
    created: list[Path] = field(default_factory=list)
    updated: list[Path] = field(default_factory=list)  # pristine copies of a changed starter
    kept: list[Path] = field(default_factory=list)  # files with the user's edits, untouched

    @property
    def is_new(self) -> bool:
        return self.file in self.created


@dataclass
class ResetResult:
    workspace: Workspace
    file: Path
    backup: Path | None  # where the user's version went (None if it was pristine or absent)


def _refuse_link(path: Path, inside: Path) -> None:
    """Raise unless ``path`` is absent or a real file or folder that resolves under ``inside``."""
    if path.is_symlink():
        raise WorkspaceError(
            f"{path} is a symbolic link; quizzer writes only real files in the workspace "
            "(remove the link, or choose another folder with --dir)"
        )
    if path.exists() and not _within(path, inside):
        raise WorkspaceError(f"{path} resolves outside the workspace {inside}; nothing written")


def _within(path: Path, folder: Path) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(folder)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _check_targets(folder: Path, names: list[str]) -> None:
    """The exercise folder, each named file in it and the backups folder: no links."""
    _refuse_link(folder, folder.parent)
    for name in [*names, MANIFEST, BACKUPS]:
        _refuse_link(folder / name, folder)


def _copy(source: Path, target: Path, new: bool = False) -> None:
    """Copy ``source`` to ``target`` without following a link at ``target`` (O_NOFOLLOW)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    if new:
        flags |= os.O_EXCL
    data = source.read_bytes()
    try:
        fd = os.open(target, flags, 0o644)
    except OSError as exc:
        raise WorkspaceError(f"cannot write {target}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_manifest(folder: Path) -> dict[str, str]:
    try:
        lines = (folder / MANIFEST).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    hashes: dict[str, str] = {}
    for line in lines:
        digest, _, name = line.partition("  ")
        if len(digest) == 64 and name:
            hashes[name] = digest
    return hashes


def _write_manifest(folder: Path, hashes: dict[str, str]) -> None:
    text = "".join(f"{digest}  {name}\n" for name, digest in sorted(hashes.items()))
    path = folder / MANIFEST
    _refuse_link(path, folder)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(path, flags, 0o644), "w", encoding="utf-8") as out:
        out.write(text)


def open_workspace(
    name: str, root: Path | None = None, catalog: Catalog | None = None
) -> Workspace:
    """Validate ``name`` against the catalog (``../x`` and unknown names raise)."""
    exercise = (catalog or load_catalog()).get(name)
    return Workspace(exercise=exercise, root=(root or default_root()).expanduser())


def _sources(exercise: Exercise, track: str | None) -> dict[str, Path]:
    """Workspace file name -> shipped source: the track's starter and the README."""
    sources = {exercise.track(track).file: exercise.starter_file(track)}
    if exercise.readme.is_file():
        sources["README.md"] = exercise.readme
    return sources


def _prepare(folder: Path, names: list[str]) -> None:
    _check_targets(folder, names)
    if folder.exists() and not folder.is_dir():
        raise WorkspaceError(f"{folder} exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkspaceError(f"cannot create {folder}: {exc.strerror or exc}") from None


def scaffold(
    name: str,
    root: Path | None = None,
    track: str | None = None,
    catalog: Catalog | None = None,
) -> ScaffoldResult:
    """Copy the starter (and README) into the workspace without touching the user's edits."""
    ws = open_workspace(name, root, catalog)
    folder = ws.path
    sources = _sources(ws.exercise, track)
    _prepare(folder, list(sources))
    hashes = _read_manifest(folder)
    result = ScaffoldResult(workspace=ws, file=ws.file(track))
    for target_name, source in sources.items():
        target = folder / target_name
        new_hash = _sha256(source)
        if not target.exists():
            _copy(source, target, new=True)
            result.created.append(target)
        elif not target.is_file():
            result.kept.append(target)  # e.g. a folder of the user's with that name
            continue
        elif _sha256(target) == new_hash:
            pass  # already the current starter
        elif hashes.get(target_name) == _sha256(target):
            _copy(source, target)  # pristine copy of an older starter
            result.updated.append(target)
        else:
            result.kept.append(target)
            continue  # the user's file: keep its recorded hash (if any) as it was
        hashes[target_name] = new_hash
    _write_manifest(folder, hashes)
    return result


def is_pristine(
    name: str, root: Path | None = None, track: str | None = None, catalog: Catalog | None = None
) -> bool:
    """True when the workspace file is absent or still exactly as scaffolded."""
    ws = open_workspace(name, root, catalog)
    target = ws.file(track)
    if not target.exists():
        return True
    return _read_manifest(ws.path).get(target.name) == _sha256(target)


def _backup_dir(folder: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    candidate = folder / BACKUPS / stamp
    suffix = 1
    while candidate.exists():
        suffix += 1
        candidate = folder / BACKUPS / f"{stamp}-{suffix}"
    return candidate


def reset(
    name: str,
    root: Path | None = None,
    track: str | None = None,
    catalog: Catalog | None = None,
) -> ResetResult:
    """Put the starter back; a file with the user's edits is first saved to a backup."""
    ws = open_workspace(name, root, catalog)
    folder = ws.path
    target = ws.file(track)
    _prepare(folder, [target.name])
    source = ws.exercise.starter_file(track)
    backup = None
    if target.exists() and not target.is_file():
        raise WorkspaceError(f"{target} exists and is not a file")
    if target.exists() and _sha256(target) != _sha256(source):
        backup_dir = _backup_dir(folder)
        backup_dir.mkdir(parents=True)
        backup = backup_dir / target.name
        shutil.copy2(target, backup)
    _copy(source, target)
    hashes = _read_manifest(folder)
    hashes[target.name] = _sha256(source)
    _write_manifest(folder, hashes)
    return ResetResult(workspace=ws, file=target, backup=backup)
