"""lru-cache beyond the common meta-tests: the O(1) check records its time ratio, and the
list-based mutant (right answers, linear time) is caught by that check alone."""

from __future__ import annotations

import pytest

from quizzer.exercises.runner import grade

from .meta import CATALOG, explain

EXERCISE = CATALOG.get("lru-cache")

pytestmark = pytest.mark.slow


def test_reference_records_the_o1_time_ratio() -> None:
    result = grade(EXERCISE, EXERCISE.solution_file(), device="cpu")
    assert result.status == "passed", explain(result)
    assert any(m.unit == "x" for m in result.metrics), "the O(1) check records its time ratio"


def test_linear_scan_fails_only_the_o1_check() -> None:
    mutant = next(m for m in EXERCISE.meta.mutants if m.file == "linear_scan.py")
    result = grade(EXERCISE, EXERCISE.mutant_file(mutant), device="cpu")
    assert [t.name for t in result.failures] == ["test_get_and_put_are_o1"], explain(result)
    assert any(mutant.expect in t.message for t in result.failures), explain(result)
