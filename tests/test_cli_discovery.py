"""Finding the valid ids: `topics`, `companies`, `interviews`, `info`, `--version`, and
errors that name the nearest id or command and the command that lists them all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from quizzer.cli.main import entry

from .conftest import FIXTURES

SMALL = str(FIXTURES / "small")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = entry(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def as_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict]:
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def loaded_after(argv: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess, str]:
    """Run the CLI in a fresh interpreter; the heavy modules it imported."""
    code = (
        "import sys\nfrom quizzer.cli.main import entry\n"
        f"code = entry({argv!r})\n"
        "bad = [m for m in ('sqlalchemy', 'textual', 'torch') if m in sys.modules]\n"
        "print('LOADED=' + ','.join(bad))\n"
    )
    env = {"QUIZZER_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    return out, out.stdout.rstrip().rsplit("LOADED=", 1)[-1]


def test_topics_count_the_cards_list_shows(capsys):
    rows = as_json(capsys, "--bank", SMALL, "topics")
    assert {r["track"] for r in rows} <= {"core", "adjacent"}
    tracks = [r["track"] for r in rows]
    assert tracks == sorted(tracks, key=lambda t: t != "core")  # core first
    for row in rows[:5]:
        listed = as_json(capsys, "--bank", SMALL, "list", "--topic", row["id"])
        assert row["cards"] == len(listed)
        assert row["interviews"] >= 0 and row["name"]


def test_topics_table_has_every_topic(capsys):
    rows = as_json(capsys, "topics")
    code, out, _ = run(capsys, "topics")
    assert code == 0
    assert all(r["id"] in out for r in rows)
    assert f"{len(rows)} topics;" in out and "quizzer study --topic ID" in out


def test_companies_most_write_ups_first_and_mixed_last(capsys):
    rows = as_json(capsys, "companies")
    *real, last = rows
    assert last["tier"] == "mixed" and last["one_company"] is False
    assert all(r["one_company"] for r in real)
    counts = [r["interviews"] for r in real]
    assert counts == sorted(counts, reverse=True)
    for row in real[:3]:
        listed = as_json(capsys, "list", "--company", row["id"])
        assert row["cards"] == len(listed)


def test_companies_table_marks_the_mixed_pool(capsys):
    code, out, _ = run(capsys, "companies")
    assert code == 0
    mixed_line = next(line for line in out.splitlines() if line.startswith("mixed "))
    assert "(not one company)" in mixed_line
    assert out.index("mixed ") > out.index("bytedance")


def test_interviews_filtered_by_company(capsys):
    rows = as_json(capsys, "interviews", "--company", "bytedance")
    assert rows and {r["company"] for r in rows} == {"bytedance"}
    everything = as_json(capsys, "interviews")
    assert len(everything) > len(rows)
    first = rows[0]
    assert first["themes"] > 0 and set(first) >= {"id", "tier", "type", "round", "cards"}
    listed = as_json(capsys, "list", "--interview", first["id"])
    assert first["cards"] == len(listed)


def test_interviews_table_counts_write_ups(capsys):
    code, out, _ = run(capsys, "interviews", "--company", "bytedance")
    assert code == 0 and "bytedance-" in out and "write-ups;" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["study", "--topic", "kvv"],
            "unknown topic 'kvv' (did you mean 'kv'?); see quizzer topics",
        ),
        (
            ["export", "csv", "--company", "bytedanse"],
            "unknown company 'bytedanse' (did you mean 'bytedance'?); see quizzer companies",
        ),
        (["interviews", "--company", "nope-co"], "; see quizzer companies"),
        (["list", "--tier", "T9"], "unknown tier 'T9'"),
        (["list", "--interview", "nope-1"], "unknown interview 'nope-1'"),
        (["study", "--interview", "nope-1"], "; see quizzer interviews"),
        (["show", "t-lruu"], "unknown question 't-lruu' (did you mean 't-lru'?); see quizzer list"),
        (
            ["exercise", "cuda-reduc"],
            "unknown exercise 'cuda-reduc' (did you mean 'cuda-reduce'?); see quizzer exercise",
        ),
        (["exercise", "../x"], "unknown exercise '../x' (ready: "),
        (
            ["config", "get", "new-per-dy"],
            "unknown setting 'new-per-dy' (did you mean 'new-per-day'?); see quizzer config",
        ),
        (["config", "set", "colour", "red"], "unknown setting 'colour'; see quizzer config"),
        (["config", "set", "focus", "kvv"], "see quizzer topics"),
    ],
)
def test_unknown_ids_name_the_listing_command(capsys, args, message):
    code, out, err = run(capsys, "--bank", SMALL, *args)
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and message in err
    assert "Traceback" not in err


def test_an_unknown_id_is_shown_on_one_line(capsys):
    code, _, err = run(capsys, "show", "a\nb" + "x" * 200)
    assert code != 0 and err.count("\n") == 1
    assert "'a\\nb" in err and "..." in err and len(err) < 200


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["stdy"], "unknown command 'stdy' (did you mean 'study'?); see quizzer --help"),
        (["topic"], "(did you mean 'topics'?)"),
        (["config", "sho"], "(did you mean 'show'?); see quizzer config --help"),
        (["db", "cpy"], "(did you mean 'copy'?)"),
        (["qqqqzz"], "unknown command 'qqqqzz'; see quizzer --help"),
    ],
)
def test_mistyped_commands_suggest_one(capsys, args, message):
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_mistyped_command_in_a_real_process(tmp_path):
    env = {"QUIZZER_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-m", "quizzer", "stdy"], capture_output=True, text=True, env=env
    )
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == (
        "error: unknown command 'stdy' (did you mean 'study'?); see quizzer --help"
    )


def test_version_names_the_database_with_its_password_hidden(capsys):
    code, out, _ = run(capsys, "--db", "postgresql://me:s3cret@db.example/quiz", "--version")
    assert code == 0
    assert out.splitlines() == ["quizzer 0.1.0", "database: postgresql://me:***@db.example/quiz"]


def test_version_follows_quizzer_db_and_creates_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("QUIZZER_DB", str(tmp_path / "mine.db"))
    code, out, _ = run(capsys, "--version")
    assert code == 0 and f"database: sqlite:///{tmp_path / 'mine.db'}" in out
    assert not (tmp_path / "mine.db").exists()
    monkeypatch.delenv("QUIZZER_DB")
    code, out, _ = run(capsys, "--version")
    assert f"sqlite:///{tmp_path / 'home' / 'quizzer.db'}" in out
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize(
    "argv",
    [["--version"], ["topics"], ["companies", "--json"], ["interviews"], ["info"], ["stdy"]],
)
def test_discovery_commands_load_no_database_ui_or_torch(argv, tmp_path):
    out, loaded = loaded_after(["--bank", SMALL, *argv], tmp_path)
    assert "LOADED=" in out.stdout, out.stderr
    assert loaded == "", f"{argv} loaded {loaded}"


def test_info_json(capsys, tmp_path):
    db = f"sqlite:///{tmp_path / 'x.db'}"
    code, out, _ = run(capsys, "--db", db, "--bank", SMALL, "info", "--json")
    facts = json.loads(out)
    assert code == 0 and facts["version"] == "0.1.0"
    assert facts["database"] == db and facts["data_dir"] == str(tmp_path / "home")
    assert facts["bank"]["questions"] > 0 and facts["extra_banks"] == [SMALL]
    assert not (tmp_path / "x.db").exists()  # info does not open the database


def test_info_table(capsys):
    code, out, _ = run(capsys, "info")
    assert code == 0
    labels = [line.split(":", 1)[0] for line in out.splitlines()]
    assert labels == ["quizzer", "python", "bank", "database", "data dir"]


def test_counts_of_one_are_singular(capsys, tmp_path):
    code, out, _ = run(capsys, "list", "--limit", "1")
    assert code == 0 and "\n1 question;" in out
    bad = tmp_path / "one.yaml"
    bad.write_text((FIXTURES / "broken" / "missing_field.yaml").read_text(encoding="utf-8"))
    code, _, err = run(capsys, "bank", "validate", str(bad))
    assert code == 1 and "1 problem found" in err and "(s)" not in err
