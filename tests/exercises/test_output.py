"""Golden output of `quizzer exercise`: what a run prints, in what order, at what width."""

from __future__ import annotations

import io
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from quizzer.cli import exercise_cmd
from quizzer.cli.main import entry
from quizzer.db.attempts import Attempt, AttemptStore
from quizzer.db.engine import open_database
from quizzer.exercises.progress import best_by_track, best_text, next_exercise
from quizzer.exercises.render import render_result
from quizzer.exercises.runner import GradeResult, grade
from quizzer.exercises.runner import TestResult as Check
from quizzer.exercises.starter import unimplemented

from .conftest import SOLUTIONS

LONG_WHY = (
    "after call #9 allocate(seq 3, 17 tokens): stale hash entry 4523048509815470071 -> "
    "block 1: the block was reused but its old hash stayed in the prefix cache"
)


def result(tests: list[Check], status: str = "failed", message: str = "") -> GradeResult:
    return GradeResult(
        exercise="kv-cache",
        status=status,  # type: ignore[arg-type]
        message=message or "8 of 26 checks failed (16 passed, 2 skipped)",
        device="cpu",
        track="python",
        duration_s=33.24,
        command=["python", "-m", "pytest"],
        solution_path=Path("kv_cache.py"),
        tests=tests,
    )


def text(renderable: object, width: int = 80) -> str:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


def kv_tests() -> list[Check]:
    cases = ["one-token", "block-multiple", "ragged", "gqa"]
    return [
        Check("grader/test_a.py::test_interface", "passed"),
        *[
            Check(
                f"grader/test_p.py::test_matches_dense_attention_for_every_case[{c}]",
                "failed",
                LONG_WHY,
            )
            for c in cases
        ],
        *[
            Check(
                f"grader/test_p.py::test_fp16_cuda[{i}]",
                "skipped",
                "needs a CUDA GPU (running on cpu)",
            )
            for i in range(23)
        ],
        Check("grader/test_a.py::test_refused_allocation_changes_nothing", "passed"),
    ]


# ---------------------------------------------------------------- the per-check rows


@pytest.mark.parametrize("width", [80, 120])
def test_parametrized_checks_have_distinct_whole_names(width: int) -> None:
    out = text(render_result(result(kv_tests()), verbose=True), width)
    for case in ["one-token", "block-multiple", "ragged", "gqa"]:
        name = f"test_matches_dense_attention_for_every_case[{case}]"
        assert sum(name in line for line in out.splitlines()) == 1, out
    assert "PASS  test_refused_allocation_changes_nothing" in out
    assert "the prefix cache" in out  # the reason wraps instead of the name


def test_same_name_in_two_files_is_told_apart() -> None:
    tests = [
        Check("grader/test_numba.py::test_sum", "passed"),
        Check("grader/test_cuda.py::test_sum", "failed", "wrong sum"),
    ]
    out = text(render_result(result(tests), verbose=True))
    assert "test_numba.py::test_sum" in out and "test_cuda.py::test_sum" in out


def test_failures_come_after_passes_and_before_the_collapsed_skips() -> None:
    out = text(render_result(result(kv_tests()), verbose=True), 120).splitlines()
    marks = [
        line.split()[0]
        for line in out
        if line.split() and line.split()[0] in ("PASS", "FAIL", "SKIP")
    ]
    assert marks == ["PASS", "PASS", "FAIL", "FAIL", "FAIL", "FAIL", "SKIP"]
    assert "SKIP  23 checks skipped: need a CUDA GPU" in out
    assert not any("test_fp16_cuda" in line for line in out)
    assert out[-1].startswith("FAILED  kv-cache: 8 of 26 checks failed")  # ends on the verdict


def test_skips_are_grouped_by_reason() -> None:
    tests = [
        Check("g.py::test_gpu", "skipped", "needs a CUDA GPU (running on cpu)"),
        Check("g.py::test_a[1]", "skipped", "for the numba track (grading cuda)"),
        Check("g.py::test_a[2]", "skipped", "for the numba track (grading cuda)"),
    ]
    out = text(render_result(result(tests, "passed", "all 0 checks passed, 3 skipped")))
    assert "2 checks skipped: for the numba track (grading cuda)" in out
    assert "1 check skipped: needs a CUDA GPU" in out


def test_narrow_terminal_puts_the_reason_under_the_name() -> None:
    out = text(render_result(result(kv_tests())), 70)
    name = "test_matches_dense_attention_for_every_case[block-multiple]"
    assert any(line.strip() == f"FAIL  {name}" for line in out.splitlines()), out
    assert max(len(line) for line in out.splitlines()) <= 70


def test_summary_line_never_breaks_inside_its_numbers() -> None:
    out = text(render_result(result([Check("g.py::test_x", "failed", "no")])), 80)
    assert "(cpu, track python, 33.2 s)" in out.splitlines()
    wide = text(render_result(result([Check("g.py::test_x", "failed", "no")])), 200)
    assert wide.splitlines()[-1].endswith("skipped)  (cpu, track python, 33.2 s)")


def test_into_a_pipe_lines_are_not_cut(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(exercise_cmd, "_is_terminal", lambda: False)
    exercise_cmd._show(render_result(result(kv_tests()), verbose=True))
    out = capsys.readouterr().out
    assert any(LONG_WHY in line for line in out.splitlines())
    assert all(line == line.rstrip() for line in out.splitlines())


# ---------------------------------------------------------------- compile-only tracks


def test_compile_only_track_on_cpu_is_not_a_pass(toy_root: Path, solution_file) -> None:  # type: ignore[no-untyped-def]
    from quizzer.exercises.catalog import load_catalog

    meta = toy_root / "toy" / "exercise.yaml"
    meta.write_text(
        meta.read_text().replace("file: toy.py\n", "file: toy.py\n    cpu: compile-only\n")
    )
    toy = load_catalog(toy_root).get("toy")
    assert toy.track("python").cpu == "compile-only" and toy.track("other").cpu == "run"
    graded = grade(toy, solution_file("good"), device="cpu")
    assert graded.status == "passed" and graded.verdict == "compile-only"
    out = text(render_result(graded), 120)
    assert "COMPILE CHECKS PASSED — compiled and inspected; not run: needs a CUDA GPU" in out
    assert not any(line.startswith("PASSED") for line in out.splitlines())


# ---------------------------------------------------------------- the command


@pytest.fixture
def cli(toy_root: Path, tmp_path: Path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    # a second ready exercise, so that a pass has a next one to offer
    shutil.copytree(toy_root / "toy", toy_root / "toy-two")
    (toy_root / "catalog.yaml").write_text(
        "- name: toy\n  status: ready\n- name: toy-two\n  status: ready\n", encoding="utf-8"
    )
    monkeypatch.setenv("QUIZZER_EXERCISES_DIR", str(toy_root))
    db = f"sqlite:///{tmp_path / 'out.db'}"

    def run(*args: str) -> tuple[int, str, str]:
        code = entry(["--db", db, "exercise", *args])
        out = capsys.readouterr()
        return code, out.out, out.err

    run.db = db  # type: ignore[attr-defined]
    run.work = tmp_path / "workspace"  # type: ignore[attr-defined]
    return run


def test_untouched_starter_is_one_line_without_a_grader_run(cli) -> None:  # type: ignore[no-untyped-def]
    cli("toy")
    code, out, _ = cli("toy", "--check")
    lines = out.strip().splitlines()
    assert code == 1
    assert lines[0].startswith("not started: implement `add` first")
    assert "-m pytest" not in out and "FAIL" not in out and len(lines) == 2
    assert "quizzer exercise toy --check" in lines[1]
    with open_database(cli.db)() as session:  # nothing was graded, nothing is stored
        from sqlalchemy import func, select

        from quizzer.db.models import ExerciseAttemptRow

        assert session.scalar(select(func.count()).select_from(ExerciseAttemptRow)) == 0


def test_what_a_starter_leaves_to_write_is_named(tmp_path: Path) -> None:
    py = tmp_path / "s.py"
    py.write_text(
        "import x\n\nclass Cache:\n    def get(self):\n        raise NotImplementedError('get')\n\n"
        "def helper():\n    return 1\n\ndef solve():\n    # TODO: write me\n    return None\n"
    )
    assert unimplemented(py) == ["Cache", "solve"]
    cu = tmp_path / "s.cu"
    cu.write_text(
        "namespace {\n__global__ void block_sum(float* x, int n) {\n    // TODO 1\n}\n}\n"
        "__device__ float twice(float v) {\n    return 2 * v;\n}\n"
        'extern "C" void solve(const float* in, int n) {\n    if (n) {\n    }\n    // TODO\n}\n'
    )
    assert unimplemented(cu) == ["block_sum", "solve"]


def test_command_once_and_a_pass_offers_the_next_exercise(cli) -> None:  # type: ignore[no-untyped-def]
    cli("toy")
    (cli.work / "toy" / "toy.py").write_text(SOLUTIONS["good"])
    code, out, _ = cli("toy", "--check")
    assert code == 0 and out.count("-m pytest") == 1
    assert out.strip().splitlines()[-1] == "passed! next: quizzer exercise toy-two"
    code, out, _ = cli()
    assert "Progress: 1/2 passed" in out and "next: quizzer exercise toy-two" in out
    code, out, _ = cli("next")
    assert code == 0 and "Next: toy-two" in out
    assert (cli.work / "toy-two" / "toy.py").is_file()


def test_status_table_best_per_track_from_counted_runs(cli) -> None:  # type: ignore[no-untyped-def]
    store = AttemptStore(open_database(cli.db))
    at = datetime(2026, 1, 1, tzinfo=UTC)

    def add(track: str, status: str, passed: int, failed: int, errors: int, skipped: int) -> None:
        store.record(
            Attempt("toy", track, at, 1.0, "cpu", status, passed, failed, errors, skipped, {})
        )

    add("python", "failed", 20, 4, 0, 1)
    add("python", "failed", 24, 0, 0, 1)
    add("python", "error", 0, 0, 25, 0)  # a syntax error: not a best result
    add("other", "compile-only", 5, 0, 0, 36)
    _, out, _ = cli()
    assert "python 24/25 (1 skip, cpu)" in out
    assert "other 5/41 (36 skip, cpu, compile only)" in out
    assert "compiled" in out and "Progress: 0/2 passed" in out


def test_install_hint_names_the_cpu_torch_step(capsys: pytest.CaptureFixture[str]) -> None:
    missing = result(
        [], "error", "importing x.py line 1 failed: ModuleNotFoundError: No module named 'torch'"
    )
    exercise_cmd._advice(None, missing, Path("x.py"))  # type: ignore[arg-type]
    out = capsys.readouterr().out.replace("\n", " ")
    assert "pip install torch==2.13.0" in out and "pip install 'quizzer[exercises]'" in out
    assert out.index("torch==2.13.0") < out.index("quizzer[exercises]")


def test_solution_lines_are_never_cut(cli, monkeypatch, toy_root: Path) -> None:  # type: ignore[no-untyped-def]
    long = "def add(a, b):\n    return a + b  # " + "x" * 150 + "\n"
    (toy_root / "toy" / "solution" / "toy.py").write_text(long)
    code, out, _ = cli("toy", "--solution", "--yes")  # into a pipe: the file as it is
    assert code == 0 and out == long
    paged: list[str] = []
    monkeypatch.setattr(exercise_cmd, "_is_terminal", lambda: True)
    monkeypatch.setattr("click.echo_via_pager", lambda text, **_: paged.append(text))
    cli("toy", "--solution", "--yes")
    import re

    plain = re.sub(r"\x1b\[[0-9;]*m", "", paged[0])
    assert "x" * 150 in plain


def test_progress_helpers() -> None:
    assert next_exercise({"a": 3, "b": 9, "c": 9}, passed=["b"]) == "c"
    assert next_exercise({"a": 3}, passed=["a"]) is None

    class A:
        def __init__(self, track: str, status: str, passed: int, skipped: int = 0) -> None:
            self.track, self.status, self.device, self.duration_s = track, status, "cpu", 1.0
            self.passed, self.failed, self.errors, self.skipped = passed, 25 - passed, 0, skipped

    best = best_by_track([A("x", "failed", 10), A("x", "error", 0), A("y", "timeout", 3)])
    assert {k: v.passed for k, v in best.items()} == {"x": 10, "y": 3}
    assert best_text(A("x", "passed", 24, skipped=1)) == "24/26 (1 skip, cpu)"


def test_compile_only_check_is_stored_as_such_and_offers_nothing(cli, toy_root: Path) -> None:  # type: ignore[no-untyped-def]
    meta = toy_root / "toy" / "exercise.yaml"
    meta.write_text(
        meta.read_text().replace("file: toy.py\n", "file: toy.py\n    cpu: compile-only\n")
    )
    cli("toy")
    (cli.work / "toy" / "toy.py").write_text(SOLUTIONS["good"])
    code, out, _ = cli("toy", "--check", "--device", "cpu")
    assert code == 0 and out.strip().splitlines()[-1].startswith("COMPILE CHECKS PASSED — ")
    assert "passed!" not in out
    from sqlalchemy import select

    from quizzer.db.models import ExerciseAttemptRow

    with open_database(cli.db)() as session:
        assert session.scalars(select(ExerciseAttemptRow.status)).all() == ["compile-only"]
    _, out, _ = cli()
    assert "compiled" in out and "Progress: 0/2 passed" in out
