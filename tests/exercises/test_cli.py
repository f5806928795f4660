"""`quizzer exercise` end to end on the toy exercise: scaffold, check, attempts, hints."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from quizzer.cli.main import entry
from quizzer.db.engine import open_database
from quizzer.db.models import ExerciseAttemptRow

from .conftest import SOLUTIONS


@pytest.fixture
def cli(toy_root, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("QUIZZER_EXERCISES_DIR", str(toy_root))
    db = f"sqlite:///{tmp_path / 'cli.db'}"

    def run(*args: str) -> tuple[int, str, str]:
        code = entry(["--db", db, "exercise", *args])
        out = capsys.readouterr()
        return code, out.out, out.err

    run.db = db  # type: ignore[attr-defined]
    return run


def attempts(db: str) -> list[ExerciseAttemptRow]:
    with open_database(db)() as s:
        return list(s.scalars(select(ExerciseAttemptRow).order_by(ExerciseAttemptRow.id)))


def test_scaffold_edit_rescaffold_keeps_edit_and_check_records_attempts(cli, tmp_path):
    code, out, _ = cli("toy")
    assert code == 0 and "Created" in out and "quizzer exercise toy --check" in out
    work = tmp_path / "workspace" / "toy" / "toy.py"
    assert work.is_file()

    code, out, _ = cli("toy", "--check")
    assert code == 1 and "not started: implement `add` first" in out and "-m pytest" not in out
    work.write_text(SOLUTIONS["partial"])
    code, out, _ = cli("toy")
    assert "has your edits" in out and work.read_text() == SOLUTIONS["partial"]

    code, out, _ = cli("toy", "--check")
    assert code == 1 and "mul(2, 3) gave 5, expected 6" in out and out.count("-m pytest") == 1
    work.write_text(SOLUTIONS["good"])
    code, out, _ = cli("toy", "--check")
    assert code == 0 and "PASSED" in out

    rows = attempts(cli.db)  # the untouched starter was not graded, so not stored
    assert [r.status for r in rows] == ["failed", "passed"]
    assert rows[-1].passed == 2 and rows[-1].device == "cpu" and rows[-1].skipped >= 1
    assert '"speed": [1.5, "GB/s"]' in rows[-1].metrics

    code, out, _ = cli()
    assert "toy" in out and "passed" in out and "2/4 (2 skip, cpu)" in out
    assert "Progress: 1/1 passed" in out


def test_reset_keeps_a_backup(cli, tmp_path):
    cli("toy")
    work = tmp_path / "workspace" / "toy" / "toy.py"
    work.write_text("# my attempt\n")
    code, out, _ = cli("toy", "--reset")
    assert code == 0 and "saved in" in out
    assert "raise NotImplementedError" in work.read_text()
    backups = list((tmp_path / "workspace" / "toy").rglob("toy.py"))
    assert any(p.read_text() == "# my attempt\n" for p in backups)


def test_hints_are_revealed_one_at_a_time(cli):
    _, first, _ = cli("toy", "--hint")
    assert "first hint" in first and "second hint" not in first
    _, second, _ = cli("toy", "--hint")
    assert "second hint" in second and "last hint" in second


def test_solution_needs_confirmation(cli, monkeypatch):
    monkeypatch.setattr("click.confirm", lambda *a, **k: False)
    code, out, err = cli("toy", "--solution")
    assert "return a + b" not in out and "not shown" in err
    code, out, _ = cli("toy", "--solution", "--yes")
    assert code == 0 and "return a + b" in out


@pytest.mark.parametrize(
    ("name", "message"),
    [("../x", "unknown exercise '../x'"), ("later", "planned"), ("nope", "unknown exercise")],
)
def test_bad_names_are_one_line(cli, name, message, tmp_path):
    code, _, err = cli(name)
    assert code != 0 and message in err and err.count("\n") == 1
    assert not (tmp_path / "workspace" / name).exists()


def test_check_without_scaffold_is_a_clear_error(cli):
    code, _, err = cli("toy", "--check")
    assert code != 0 and "run 'quizzer exercise toy' first" in err


def test_watch_regrades_on_save(toy_root, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import threading
    import time

    env = {
        **os.environ,
        "QUIZZER_EXERCISES_DIR": str(toy_root),
        "QUIZZER_HOME": str(tmp_path / "h"),
    }
    db = f"sqlite:///{tmp_path / 'watch.db'}"
    base = [sys.executable, "-m", "quizzer", "--db", db, "exercise", "toy"]
    subprocess.run(base, env=env, check=True, capture_output=True)
    proc = subprocess.Popen(
        [*base, "--check", "--watch"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # Ctrl-C as in a terminal: a test run started in the background inherits SIGINT
        # ignored, and Python then installs no KeyboardInterrupt handler
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
        reader.start()  # a thread, so a silent process can never block the test
        deadline = time.monotonic() + 90

        def wait_for(text: str, after: int = 0) -> int:
            while time.monotonic() < deadline:
                for index in range(after, len(lines)):
                    if text in lines[index]:
                        return index
                time.sleep(0.1)
            raise AssertionError(f"{text!r} never printed: {''.join(lines)[-2000:]}")

        seen = wait_for("not started: implement `add` first")
        work = tmp_path / "workspace" / "toy" / "toy.py"

        def save(text: str) -> None:  # as an editor saves: the new file replaces the old at once
            fresh = work.with_suffix(".tmp")
            fresh.write_text(text)
            os.replace(fresh, work)

        save(SOLUTIONS["partial"])
        seen = wait_for("FAILED", after=seen)
        save(SOLUTIONS["good"])
        done = wait_for("PASSED", after=seen)
        wait_for("passed! every exercise is done", after=done)
        time.sleep(1.5)  # what follows the result while the watcher waits for a save
        runs = "".join(lines).split("PASSED")
        assert "-m pytest" not in runs[-1] and "Watching" not in runs[-1]
        assert "".join(lines).count("-m pytest") == 2  # once per graded run
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=60)  # a grading still running is cleaned up first (up to 30 s)
    assert [r.status for r in attempts(db)] == ["failed", "passed"]
