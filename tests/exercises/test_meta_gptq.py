"""Meta-tests of gptq, end to end through the runner: the reference passes, the starter fails,
each mutant fails with a message naming the broken property."""

from __future__ import annotations

from pathlib import Path

import pytest

from quizzer.exercises.catalog import Mutant, load_catalog
from quizzer.exercises.runner import GradeResult, grade

EXERCISE = load_catalog(Path(__file__).resolve().parents[2] / "exercises").get("gptq")
MUTANTS = EXERCISE.meta.mutants

pytestmark = pytest.mark.slow


def explain(result: GradeResult) -> str:
    lines = [f"{result.status}: {result.message}"]
    lines += [f"  {t.name}: {t.outcome}: {t.message[:300]}" for t in result.failures[:8]]
    return "\n".join([*lines, result.output[-1500:]])


def test_reference_passes() -> None:
    result = grade(EXERCISE, EXERCISE.solution_file(), device="cpu")
    assert result.status == "passed", explain(result)
    assert result.device == "cpu"
    assert result.count("passed") >= 20, explain(result)


def test_starter_fails() -> None:
    result = grade(EXERCISE, EXERCISE.starter_file(), device="cpu", extra_args=["-x"])
    assert result.status == "failed", explain(result)
    assert "not implemented" in result.failures[0].message


def test_every_mutant_file_is_listed() -> None:
    folder = EXERCISE.path / "solution" / "mutants"
    assert {m.file for m in MUTANTS} == {p.name for p in folder.iterdir()}
    for mutant in MUTANTS:
        first = EXERCISE.mutant_file(mutant).read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# mutant: "), mutant.file


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.file for m in MUTANTS])
def test_mutant_fails_naming_the_property(mutant: Mutant) -> None:
    # stop at the first failing check: it must already name the property
    result = grade(EXERCISE, EXERCISE.mutant_file(mutant), device="cpu", extra_args=["-x"])
    assert result.status == "failed", explain(result)
    assert any(mutant.expect in t.message for t in result.failures), (
        f"no failure mentions {mutant.expect!r}:\n{explain(result)}"
    )
