"""Recognise an untouched starter, and name what it leaves for the user to write.

A file that is still the shipped starter (comments and layout aside) needs no grader run:
every check would fail the same way. :func:`not_started` says so in one result instead.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from quizzer.exercises import guard
from quizzer.exercises.catalog import Exercise
from quizzer.exercises.runner import GradeResult

# a C/C++/CUDA function definition: `[qualifiers] type name(args) {` on one line
_C_FUNCTION = re.compile(r"^[\w\s\"*&:<>,]*?\b(\w+)\s*\([^;{}]*\)\s*(?:const\s*)?\{")
_C_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof"}


def is_untouched(exercise: Exercise, path: Path, track: str | None = None) -> bool:
    """``path`` is the track's shipped starter, with at most comments or layout changed."""
    mine = guard.file_fingerprint(path)
    return mine is not None and mine == guard.file_fingerprint(exercise.starter_file(track))


def _raises_not_implemented(node: ast.AST) -> bool:
    for child in ast.walk(node):
        if isinstance(child, ast.Raise) and child.exc is not None:
            target = child.exc.func if isinstance(child.exc, ast.Call) else child.exc
            if isinstance(target, ast.Name) and target.id == "NotImplementedError":
                return True
    return False


def _has_todo(node: ast.AST, lines: list[str]) -> bool:
    start, end = getattr(node, "lineno", 0), getattr(node, "end_lineno", 0) or 0
    return any("TODO" in line for line in lines[start - 1 : end])


def _python_names(source: str) -> list[str]:
    tree = ast.parse(source)
    lines = source.splitlines()
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and (
            _raises_not_implemented(node) or _has_todo(node, lines)
        ):
            names.append(node.name)
    return names


def _c_names(source: str) -> list[str]:
    """Functions whose body holds a TODO, in the order they are defined."""
    names: list[str] = []
    current, depth = None, 0
    for line in source.splitlines():
        match = _C_FUNCTION.match(line)
        if current is None and match and match.group(1) not in _C_KEYWORDS:
            current, depth = match.group(1), 0
        if current is not None:
            depth += line.count("{") - line.count("}")
            if "TODO" in line and current not in names:
                names.append(current)
            if depth <= 0:
                current = None
    return names


def unimplemented(path: Path) -> list[str]:
    """The top-level functions and classes a starter leaves to write (raise
    NotImplementedError or hold a TODO), in file order; [] when none are found."""
    try:
        source = path.read_text(encoding="utf-8")
        return _python_names(source) if path.suffix == ".py" else _c_names(source)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []


def _listing(names: list[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def not_started(exercise: Exercise, path: Path, track: str | None = None) -> GradeResult | None:
    """A "not-started" result when ``path`` is still the starter, else None (grade it)."""
    if not is_untouched(exercise, path, track):
        return None
    names = unimplemented(exercise.starter_file(track)) or [path.name]
    return GradeResult(
        exercise=exercise.name,
        status="not-started",
        message=f"not started: implement {_listing(names)} first",
        device="none",
        track=exercise.track(track).name,
        duration_s=0.0,
        command=[],
        solution_path=path,
    )
