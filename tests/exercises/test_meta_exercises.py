"""Meta-tests of every single-track exercise, end to end through the runner: the reference
passes, the starter fails, every mutant is listed and fails with a message naming the broken
property. (cuda-reduce, with two tracks, has its own module.)"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from quizzer.exercises.runner import grade

from .meta import CATALOG, explain


@dataclass(frozen=True)
class Expect:
    min_passed: int = 1
    skipped: int | None = None  # exactly this many checks skip on a CPU (GPU-only ones)
    # starter and mutants stop at the first failing check (-x): it must already name the
    # property, and a deadlocking ring costs one 10 s timeout instead of three
    fail_fast: bool = True


EXPECT = {
    "ring-allreduce": Expect(min_passed=20),
    "kv-cache": Expect(min_passed=20, fail_fast=False),
    "gptq": Expect(min_passed=20),
    "gqa": Expect(min_passed=30),
    "lru-cache": Expect(min_passed=20),
    "top-p-sampling": Expect(min_passed=20, skipped=1),
    "rope": Expect(min_passed=63, skipped=2),
    "spec-decode-sampling": Expect(min_passed=12),
    "flash-attention": Expect(min_passed=46, skipped=2),
    "tp-linear": Expect(min_passed=18, skipped=0),
    "continuous-batching": Expect(min_passed=19),
}
MUTANTS = [(name, m) for name in EXPECT for m in CATALOG.get(name).meta.mutants]
# Correct solutions written independently of the reference, in other styles.
ALTERNATIVES = [
    (name, path)
    for name in EXPECT
    for path in sorted((CATALOG.get(name).path / "solution" / "alternatives").glob("*.py"))
]

pytestmark = pytest.mark.slow


def test_every_single_track_exercise_is_covered() -> None:
    ready = [n for n in CATALOG.names if CATALOG.entry(n).status == "ready"]
    single = {n for n in ready if len(CATALOG.get(n).meta.tracks) == 1}
    assert single == set(EXPECT)


def extra(name: str) -> list[str]:
    return ["-x"] if EXPECT[name].fail_fast else []


@pytest.mark.parametrize("name", list(EXPECT))
def test_reference_passes(name: str) -> None:
    ex, want = CATALOG.get(name), EXPECT[name]
    result = grade(ex, ex.solution_file(), device="cpu")
    assert result.status == "passed", explain(result)
    assert result.device == "cpu"
    assert result.count("passed") >= want.min_passed, explain(result)
    if want.skipped is not None:
        assert result.count("skipped") == want.skipped, explain(result)


@pytest.mark.parametrize(
    ("name", "path"), ALTERNATIVES, ids=[f"{n}:{p.name}" for n, p in ALTERNATIVES]
)
def test_alternative_solution_passes(name: str, path) -> None:  # type: ignore[no-untyped-def]
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# alternative: "), path.name
    result = grade(CATALOG.get(name), path, device="cpu")
    assert result.status == "passed", explain(result)


@pytest.mark.parametrize("name", list(EXPECT))
def test_starter_fails(name: str) -> None:
    ex = CATALOG.get(name)
    result = grade(ex, ex.starter_file(), device="cpu", extra_args=extra(name))
    assert result.status == "failed", explain(result)
    assert re.search(r"not ?implemented", result.failures[0].message, re.I), explain(result)


@pytest.mark.parametrize("name", list(EXPECT))
def test_every_mutant_file_is_listed(name: str) -> None:
    ex = CATALOG.get(name)
    folder = ex.path / "solution" / "mutants"
    assert {m.file for m in ex.meta.mutants} == {p.name for p in folder.iterdir()}
    for mutant in ex.meta.mutants:
        first = ex.mutant_file(mutant).read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# mutant: "), mutant.file


@pytest.mark.parametrize(("name", "mutant"), MUTANTS, ids=[f"{n}:{m.file}" for n, m in MUTANTS])
def test_mutant_fails_naming_the_property(name: str, mutant) -> None:  # type: ignore[no-untyped-def]
    ex = CATALOG.get(name)
    result = grade(ex, ex.mutant_file(mutant), device="cpu", extra_args=extra(name))
    assert result.status == "failed", explain(result)
    assert any(mutant.expect in t.message for t in result.failures), (
        f"no failure mentions {mutant.expect!r}:\n{explain(result)}"
    )
