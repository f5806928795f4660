"""Golden results of the runner on a toy grader: pass, partial, syntax/import error, timeout,
crash; each runs the real subprocess (``sys.executable -m pytest ... -p plugin``)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from quizzer.exercises.catalog import Exercise, ExerciseError
from quizzer.exercises.runner import GradeResult, grade


def golden(result: GradeResult) -> dict[str, object]:
    return {
        "status": result.status,
        "message": result.message,
        "tests": [(t.name, t.outcome, t.message) for t in result.tests],
    }


def test_all_pass(toy: Exercise, solution_file) -> None:
    result = grade(toy, solution_file("good"), device="cpu")
    assert golden(result) == {
        "status": "passed",
        "message": "all 2 checks passed, 2 skipped",
        "tests": [
            ("test_add", "passed", ""),
            ("test_mul", "passed", ""),
            ("test_gpu_only", "skipped", "needs a CUDA GPU (running on cpu)"),
            ("test_other_track", "skipped", "for the other track (grading python)"),
        ],
    }
    assert result.passed and result.device == "cpu" and result.track == "python"
    assert [(m.name, m.value, m.unit) for m in result.metrics] == [("speed", 1.5, "GB/s")]
    assert result.command[:3] == [sys.executable, "-m", "pytest"]
    assert "-p quizzer.exercises.plugin" in result.command_line
    assert result.to_dict()["status"] == "passed"


def test_partial_pass(toy: Exercise, solution_file) -> None:
    result = grade(toy, solution_file("partial"), device="cpu")
    assert golden(result)["status"] == "failed"
    assert result.message == "1 of 4 checks failed (1 passed, 2 skipped)"
    assert golden(result)["tests"][:2] == [
        ("test_add", "passed", ""),
        ("test_mul", "failed", "mul(2, 3) gave 5, expected 6"),
    ]
    assert "assert 5 == 6" in result.failures[0].details


def test_syntax_error(toy: Exercise, solution_file) -> None:
    result = grade(toy, solution_file("syntax"), device="cpu")
    assert result.status == "error"
    assert result.message.startswith("syntax error in syntax.py line 2: invalid syntax")
    assert [t.outcome for t in result.tests[:2]] == ["error", "error"]


def test_import_error(toy: Exercise, solution_file) -> None:
    result = grade(toy, solution_file("import"), device="cpu")
    assert result.status == "error"
    assert result.message == (
        "importing import.py line 1 failed: ModuleNotFoundError: "
        "No module named 'no_such_module_xyz'"
    )


def test_timeout_is_reported_within_the_limit(toy: Exercise, solution_file) -> None:
    start = time.monotonic()
    result = grade(toy, solution_file("hang"), device="cpu", timeout=8)
    assert time.monotonic() - start < 8 + 5
    assert golden(result) == {
        "status": "timeout",
        "message": "timed out after 8 s while running test_add",
        "tests": [("test_add", "error", "timed out after 8 s while running test_add")],
    }


@pytest.mark.parametrize(
    ("kind", "how"), [("abort", "SIGABRT"), ("exit", "exit code 3")], ids=["abort", "exit"]
)
def test_crash(toy: Exercise, solution_file, kind: str, how: str) -> None:
    result = grade(toy, solution_file(kind), device="cpu")
    assert result.status == "crashed"
    assert result.message == f"the grader process died ({how}) while running test_add"
    assert result.tests[-1].outcome == "error"


def test_timeout_kills_the_whole_process_group(toy: Exercise, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    solution = tmp_path / "spawner.py"
    solution.write_text(
        "import subprocess, sys\n"
        "def add(a, b):\n"
        "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"    open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "    while True:\n"
        "        pass\n",
        encoding="utf-8",
    )
    result = grade(toy, solution, device="cpu", timeout=8)
    assert result.status == "timeout"
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "a process started by the grader outlived the timeout"


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status  # a zombie is dead, only not yet reaped


def test_bad_arguments_raise_one_line_errors(toy: Exercise, tmp_path: Path) -> None:
    with pytest.raises(ExerciseError, match="solution file not found"):
        grade(toy, tmp_path / "missing.py", device="cpu")
    (tmp_path / "x.py").write_text("")
    with pytest.raises(ExerciseError, match="no track 'nope'"):
        grade(toy, tmp_path / "x.py", track="nope")
    with pytest.raises(ExerciseError, match="unknown device"):
        grade(toy, tmp_path / "x.py", device="tpu")  # type: ignore[arg-type]


def test_runner_imports_neither_torch_nor_pytest_plugins_at_import() -> None:
    code = (
        "import sys, quizzer.exercises, quizzer.exercises.runner, quizzer.exercises.workspace\n"
        "bad = [m for m in ('torch', 'textual', 'sqlalchemy') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    import subprocess

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_render_result(toy: Exercise, solution_file) -> None:
    from rich.console import Console

    from quizzer.exercises.render import render_result

    result = grade(toy, solution_file("partial"), device="cpu")
    console = Console(width=120, record=True, color_system=None)
    console.print(render_result(result, verbose=True))
    text = console.export_text()
    assert text.strip().splitlines()[-1].startswith("FAILED  toy: 1 of 4 checks failed")
    assert "mul(2, 3) gave 5, expected 6" in text
    assert "speed" in text and "GB/s" in text
    assert "SKIP  1 check skipped: needs a CUDA GPU" in text
    assert "-p quizzer.exercises.plugin" not in text  # the command line is the CLI's to print


def test_device_auto_resolves_and_cuda_without_gpu_is_an_error(
    toy: Exercise, solution_file
) -> None:
    torch = pytest.importorskip("torch")
    path = solution_file("good")
    result = grade(toy, path, device="auto")
    assert result.device == ("cuda" if torch.cuda.is_available() else "cpu")
    if torch.cuda.is_available():
        return
    result = grade(toy, path, device="cuda")
    assert result.status == "error"
    assert "no CUDA GPU is visible to torch" in result.message
