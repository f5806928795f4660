"""Keep the shipped reference solutions out of a graded run.

Two layers. Before the run, the runner compares the submission with the exercise's reference
(Python: the AST without docstrings; other sources such as CUDA C++: the token stream without
comments), so a copy with new comments or formatting is caught without running anything.
During the run, :func:`install` (called by ``load_solution`` before the user's module executes)
adds an import finder and an audit hook to the grader process, and every process that loads
the solution: importing, opening (by any path, symlink or hard link: files are matched by
inode) or compiling the text of a reference file raises :class:`ReferenceSolutionError` and
reports the use; so does an ``import`` statement in the user's module that reaches into a
grader's own code (its model implementations are references too). The runner passes what
to protect in the ``QUIZZER_GUARD`` environment variable (paths and fingerprints, nothing
secret).

Residual risk, accepted: code that reads a reference in a separate interpreter and keeps the
work there, or that patches this module after it is installed, is not caught here; the
reference stays readable to the user on purpose (``--solution`` shows it).
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import importlib.abc
import importlib.machinery
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ENV = "QUIZZER_GUARD"
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.MULTILINE)
_TOKEN = re.compile(r"\w+|[^\w\s]")
_C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


class ReferenceSolutionError(PermissionError):
    """The user's code reached for a shipped reference solution."""


def _strip_docstrings(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first = body[0].value if body and isinstance(body[0], ast.Expr) else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):  # a docstring
            node.body = body[1:] or [ast.Pass()]


def fingerprint(source: str | bytes, python: bool = True) -> str | None:
    """A hash of ``source`` that ignores comments, docstrings, formatting and blank lines.

    ``python=False`` hashes the token stream of a C-like source with its comments removed.
    None when a Python source does not parse.
    """
    if python:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return None
        _strip_docstrings(tree)
        text = ast.dump(tree, annotate_fields=False, include_attributes=False)
    else:
        raw = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
        text = " ".join(_TOKEN.findall(_C_COMMENT.sub(" ", raw)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_fingerprint(path: Path) -> str | None:
    """:func:`fingerprint` of a file, Python or not by its suffix; None if unreadable."""
    try:
        source = path.read_bytes()
    except OSError:
        return None
    return fingerprint(source, python=path.suffix == ".py")


def solution_dirs(roots: Iterable[Path]) -> list[Path]:
    """The ``solution/`` folder of every exercise under each catalog root (resolved, unique)."""
    found: dict[str, Path] = {}
    for root in roots:
        try:
            children = sorted(root.iterdir())
        except OSError:
            continue
        for child in children:
            folder = child / "solution"
            if folder.is_dir():
                found.setdefault(os.path.realpath(folder), Path(os.path.realpath(folder)))
    return list(found.values())


def reference_files(solution_dir: Path) -> list[Path]:
    """The reference solutions in one exercise's ``solution/`` (mutants excluded)."""
    return sorted(p for p in solution_dir.iterdir() if p.is_file() and p.suffix in (".py", ".cu"))


def _inode(path: str | Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def includes_reference(path: Path, protected: Sequence[Path]) -> str | None:
    """The first ``#include`` in a C-like ``path`` that names a protected file, if any."""
    inodes = _protected_inodes(protected)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for name in _INCLUDE.findall(text):
        candidate = Path(name) if os.path.isabs(name) else path.parent / name
        if _inode(candidate) in inodes:
            return name
    return None


@dataclass(frozen=True)
class GuardSpec:
    """What to protect: the solution folders and the fingerprints of the references."""

    dirs: tuple[str, ...]
    fingerprints: tuple[str, ...]
    max_size: int

    def to_env(self) -> str:
        """The value of :data:`ENV`."""
        return json.dumps({"dirs": self.dirs, "fp": self.fingerprints, "max": self.max_size})

    @classmethod
    def from_env(cls, value: str | None) -> GuardSpec | None:
        """Parse :data:`ENV`; None when unset or malformed."""
        try:
            data = json.loads(value or "")
            return cls(tuple(data["dirs"]), tuple(data["fp"]), int(data["max"]))
        except (ValueError, KeyError, TypeError):
            return None


def make_spec(dirs: Sequence[Path], references: Sequence[Path]) -> GuardSpec:
    """The spec for a run protecting ``dirs`` whose references are ``references``."""
    prints = tuple(fp for p in references if (fp := file_fingerprint(p)))
    sizes = [p.stat().st_size for p in references if p.is_file()]
    return GuardSpec(tuple(str(d) for d in dirs), prints, 2 * max(sizes, default=0) + 4096)


def _protected_inodes(dirs: Iterable[str | Path]) -> frozenset[tuple[int, int]]:
    inodes = set()
    for folder in dirs:
        for base, _, names in os.walk(folder):
            for name in names:
                if (node := _inode(os.path.join(base, name))) is not None:
                    inodes.add(node)
    return frozenset(inodes)


Reporter = Callable[[str], None]
_state: dict[str, object] = {}


def set_reporter(reporter: Reporter | None) -> None:
    """Where a detected use is reported (the plugin sends it to the runner)."""
    _state["reporter"] = reporter


def _violation(what: str, whose: str = "a shipped reference solution") -> ReferenceSolutionError:
    message = f"reference copied: the solution {what} ({whose})"
    reporter = _state.get("reporter")
    if callable(reporter):
        reporter(message)
    return ReferenceSolutionError(message)


class _ReferenceFinder(importlib.abc.MetaPathFinder):
    """Refuses to import any module whose file is a protected reference."""

    def __init__(self, inodes: frozenset[tuple[int, int]]) -> None:
        self._inodes = inodes

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.origin and _inode(spec.origin) in self._inodes:
            raise _violation(f"imports {fullname}")
        return None  # let the normal finders do the import


def _audit_hook(spec: GuardSpec, inodes: frozenset[tuple[int, int]]) -> Callable[..., None]:
    prints = frozenset(spec.fingerprints)
    busy: list[bool] = []  # ast.parse compiles too: do not check our own check

    def hook(event: str, args: tuple[object, ...]) -> None:
        if busy or event not in ("open", "compile", "os.link", "os.rename"):
            return
        busy.append(True)
        try:
            _check(event, args)
        finally:
            busy.pop()

    def _check(event: str, args: tuple[object, ...]) -> None:
        if event == "compile":
            source = args[0]
            small = isinstance(source, (str, bytes)) and len(source) <= spec.max_size
            if small and fingerprint(source) in prints:  # type: ignore[arg-type]
                raise _violation("runs the text of the reference")
            return
        target = args[0]
        if isinstance(target, (str, bytes, os.PathLike)) and _inode(target) in inodes:
            raise _violation(f"opens {os.fsdecode(target)}")

    return hook


def _under(path: object, folders: tuple[str, ...]) -> bool:
    if not isinstance(path, str):
        return False
    real = os.path.realpath(path)
    return any(real.startswith(folder) for folder in folders)


def user_builtins() -> dict[str, object] | None:
    """Builtins for the user's module whose ``__import__`` refuses the graders' own modules.

    None when no guard is installed. Code that fetches such a module from ``sys.modules``
    directly is not caught: the accepted residual risk of running in the grader's process.
    """
    spec = _state.get("spec")
    if not isinstance(spec, GuardSpec):
        return None
    folders = tuple(
        os.path.realpath(os.path.join(os.path.dirname(d), sub)) + os.sep
        for d in spec.dirs
        for sub in ("grader", "solution")
    )
    real_import = builtins.__import__

    def guarded_import(
        name: str,
        globals: dict[str, object] | None = None,
        locals: dict[str, object] | None = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> ModuleType:
        module = real_import(name, globals, locals, fromlist, level)
        reached = [module, sys.modules.get(name)]
        reached += [getattr(module, item, None) for item in fromlist or ()]
        for item in reached:
            if isinstance(item, ModuleType) and _under(getattr(item, "__file__", None), folders):
                raise _violation(f"imports {name}", "the grader's own code")
        return module

    return {**builtins.__dict__, "__import__": guarded_import}


def install(spec: GuardSpec | None = None) -> bool:
    """Install the finder and audit hook once per process (from :data:`ENV` by default).

    False when there is nothing to protect. Audit hooks cannot be removed: this is for the
    grader's processes only.
    """
    if _state.get("installed"):
        return True
    spec = spec or GuardSpec.from_env(os.environ.get(ENV))
    if spec is None:
        return False
    inodes = _protected_inodes(spec.dirs)
    sys.meta_path.insert(0, _ReferenceFinder(inodes))
    sys.addaudithook(_audit_hook(spec, inodes))
    _state["installed"] = True
    _state["spec"] = spec
    return True
