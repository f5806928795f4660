"""Shared by the meta-tests: the repository's exercise catalog and a readable grade report."""

from __future__ import annotations

from pathlib import Path

from quizzer.exercises.catalog import load_catalog
from quizzer.exercises.runner import GradeResult

CATALOG = load_catalog(Path(__file__).resolve().parents[2] / "exercises")


def explain(result: GradeResult) -> str:
    lines = [f"{result.status}: {result.message}"]
    lines += [f"  {t.name}: {t.outcome}: {t.message[:300]}" for t in result.failures[:8]]
    return "\n".join([*lines, result.output[-1500:]])
