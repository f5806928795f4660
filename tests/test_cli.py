"""The plain commands: output, JSON, and one-line errors with non-zero exits."""

from __future__ import annotations

import json

import pytest

from quizzer.cli.main import entry

from .conftest import FIXTURES


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = entry(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("quizzer ")


def test_list_json_filters(capsys):
    code, out, _ = run(
        capsys, "--bank", str(FIXTURES / "small"), "list", "--topic", "algo", "--json"
    )
    assert code == 0
    rows = json.loads(out)
    assert rows and all(r["topic"] == "algo" for r in rows)
    assert any(r["id"] == "t-lru" for r in rows)


def test_list_due_orders_like_the_queue(capsys, tmp_path):
    db = f"sqlite:///{tmp_path / 'x.db'}"
    code, out, _ = run(capsys, "--db", db, "list", "--due", "--json", "--limit", "5")
    assert code == 0
    assert len(json.loads(out)) == 5


def test_show_renders_answer(capsys):
    code, out, _ = run(capsys, "--bank", str(FIXTURES / "small"), "show", "t-lru")
    assert code == 0
    assert "doubly linked list" in out and "Key points" in out


def test_show_by_alias(capsys):
    code, out, _ = run(capsys, "--bank", str(FIXTURES / "small"), "show", "t-kv-old")
    assert code == 0 and "t-kv" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["list", "--company", "bytedanse"],
            "unknown company 'bytedanse' (did you mean 'bytedance'?); see quizzer companies",
        ),
        (
            ["list", "--topic", "kvv"],
            "unknown topic 'kvv' (did you mean 'kv'?); see quizzer topics",
        ),
        (["list", "--interview", "nope-1"], "unknown interview 'nope-1'"),
        (["show", "no-such-question"], "unknown question 'no-such-question'"),
        (["--db", "nosuchdialect://x", "list", "--due"], "bad database URL"),
    ],
)
def test_user_errors_are_one_line(capsys, args, message):
    code, _, err = run(capsys, *args)
    assert code != 0
    assert err.count("\n") == 1 and message in err
    assert "Traceback" not in err


def test_corrupt_database_is_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    code, _, err = run(capsys, "--db", f"sqlite:///{bad}", "list", "--due")
    assert code == 2
    assert err.strip() == err.strip().splitlines()[0]
    assert "corrupt or not a quizzer database" in err


def test_env_var_selects_database(capsys, tmp_path, monkeypatch):
    path = tmp_path / "env.db"
    monkeypatch.setenv("QUIZZER_DB", f"sqlite:///{path}")
    code, _, _ = run(capsys, "list", "--due", "--limit", "1")
    assert code == 0 and path.exists()


def test_default_database_lives_in_user_data_dir(capsys, tmp_path):
    code, _, _ = run(capsys, "list", "--due", "--limit", "1")
    assert code == 0
    assert (tmp_path / "home" / "quizzer.db").exists()


def test_show_says_how_its_code_is_checked(capsys):
    code, out, _ = run(capsys, "--bank", str(FIXTURES / "small"), "show", "t-code")
    assert code == 0
    assert "code not behaviour-tested: 1 block (1 fragment)" in out
    assert "fragment" not in out.split("code not")[0]  # the info string's tags stay hidden
    _, out, _ = run(capsys, "--bank", str(FIXTURES / "small"), "show", "t-lru")
    assert "code " not in out  # a card without code says nothing about code


def test_validate_counts_the_code_blocks(capsys):
    code, out, _ = run(capsys, "bank", "validate")
    assert code == 0
    line = " ".join(out.split("code blocks:")[1].split())
    assert "behaviour-tested" in line and "of the Python blocks that define" in line


def test_bare_quizzer_reports_a_bad_database_in_one_line(tmp_path):
    """Bare `quizzer` starts without the command-line parser and still fails in one line."""
    import os
    import subprocess
    import sys

    code = (
        "import sys; from quizzer.cli.launch import run; sys.argv = ['quizzer']\n"
        "try:\n    run()\nfinally:\n    print('CLICK', 'click' in sys.modules)"
    )
    env = {**os.environ, "QUIZZER_DB": str(tmp_path / "missing" / "q.db")}
    env["QUIZZER_HOME"] = str(tmp_path / "home")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"error: the folder {tmp_path / 'missing'} does not exist; create it or choose "
        "another --db path"
    ]
    assert "CLICK False" in out.stdout
