"""Meta-tests of ring-allreduce and kv-cache, end to end through the runner: the reference
passes, the starter fails, each mutant fails with a message naming the broken property."""

from __future__ import annotations

from pathlib import Path

import pytest

from quizzer.exercises.catalog import load_catalog
from quizzer.exercises.runner import GradeResult, grade

CATALOG = load_catalog(Path(__file__).resolve().parents[2] / "exercises")
MINE = ["ring-allreduce", "kv-cache"]
MUTANTS = [(name, m) for name in MINE for m in CATALOG.get(name).meta.mutants]
# mutants stop at the first failing check (-x): it must already name the property, and a
# deadlocking ring then costs one 10 s timeout instead of three
FAIL_FAST = {"ring-allreduce": ["-x"]}

pytestmark = pytest.mark.slow


def explain(result: GradeResult) -> str:
    lines = [f"{result.status}: {result.message}"]
    lines += [f"  {t.name}: {t.outcome}: {t.message[:300]}" for t in result.failures[:8]]
    return "\n".join([*lines, result.output[-1500:]])


@pytest.mark.parametrize("name", MINE)
def test_reference_passes(name: str) -> None:
    ex = CATALOG.get(name)
    result = grade(ex, ex.solution_file(), device="cpu")
    assert result.status == "passed", explain(result)
    assert result.device == "cpu"


@pytest.mark.parametrize("name", MINE)
def test_starter_fails(name: str) -> None:
    ex = CATALOG.get(name)
    result = grade(ex, ex.starter_file(), device="cpu", extra_args=FAIL_FAST.get(name))
    assert result.status == "failed", explain(result)
    assert "NotImplementedError" in result.failures[0].message


@pytest.mark.parametrize(("name", "mutant"), MUTANTS, ids=[f"{n}:{m.file}" for n, m in MUTANTS])
def test_mutant_fails_naming_the_property(name: str, mutant) -> None:  # type: ignore[no-untyped-def]
    ex = CATALOG.get(name)
    result = grade(ex, ex.mutant_file(mutant), device="cpu", extra_args=FAIL_FAST.get(name))
    assert result.status == "failed", explain(result)
    assert any(mutant.expect in t.message for t in result.failures), (
        f"no failure mentions {mutant.expect!r}:\n{explain(result)}"
    )
