"""The core never imports the UI or torch: checked in a fresh interpreter per module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import quizzer

PACKAGE = Path(quizzer.__file__).parent
EXCLUDED = ("quizzer.tui", "quizzer.db.migrations", "quizzer.__main__")
MODULES = sorted(
    ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
    for p in PACKAGE.rglob("*.py")
    if "_data" not in p.parts
)
CORE = [m for m in MODULES if not m.startswith(EXCLUDED)]


@pytest.mark.parametrize("module", CORE)
def test_module_imports_neither_textual_nor_torch(module: str) -> None:
    code = (
        f"import sys, importlib; importlib.import_module({module!r}); "
        "bad = [m for m in ('textual', 'torch', 'numba') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} imported {out.stdout.strip()}"


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["list", "--limit", "1"],
        ["bank", "validate"],
        ["show", "t-lru"],
        ["plan", "show"],
    ],
)
def test_plain_commands_do_not_load_textual_or_torch(argv: list[str], tmp_path) -> None:
    fixtures = Path(__file__).parent / "fixtures" / "small"
    code = (
        "import sys\nfrom quizzer.cli.main import entry\n"
        f"code = entry(['--bank', {str(fixtures)!r}, *{argv!r}])\n"
        "bad = [m for m in ('textual', 'torch') if m in sys.modules]\n"
        "print('LOADED=' + ','.join(bad))\n"
    )
    env = {"QUIZZER_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert "LOADED=\n" in out.stdout or out.stdout.rstrip().endswith("LOADED="), out.stderr


def test_stats_on_an_sqlite_file_reads_without_sqlalchemy(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    env = {"QUIZZER_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    first = [sys.executable, "-m", "quizzer", "--db", url, "stats"]
    subprocess.run(first, capture_output=True, check=True, env=env)  # creates the database
    code = (
        "import sys\nfrom quizzer.cli.main import entry\n"
        f"code = entry(['--db', {url!r}, 'stats', '--json'])\n"
        "print('LOADED=' + ','.join(m for m in ('sqlalchemy', 'textual') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0 and '"new_available"' in out.stdout, out.stderr
    assert out.stdout.rstrip().endswith("LOADED="), out.stdout[-200:]
