"""Fixtures for the exercise framework tests: a toy exercise catalog and a temp workspace."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from quizzer.exercises.catalog import Catalog, Exercise, load_catalog

TOY_GRADER = """
import pytest


def test_add(solution):
    assert solution.add(2, 3) == 5, "add(2, 3) should be 5"


def test_mul(solution, record_metric):
    record_metric("speed", 1.5, "GB/s")
    got = solution.mul(2, 3)
    assert got == 6, f"mul(2, 3) gave {got}, expected 6"


@pytest.mark.cuda
def test_gpu_only(solution):
    pass


@pytest.mark.track("other")
def test_other_track(solution):
    raise AssertionError("never runs on the python track")
"""

TOY_META = """
title: Toy exercise
topic: red
difficulty: easy
minutes: 1
devices: [cpu]
timeout_s: 20
tracks:
  - name: python
    file: toy.py
  - name: other
    file: toy_other.py
hints: [first hint, second hint]
"""

SOLUTIONS = {
    "good": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    "partial": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n",
    "syntax": "def add(a, b):\n    return a +\n",
    "import": "import no_such_module_xyz\n",
    "hang": "def add(a, b):\n    while True:\n        pass\n",
    "abort": "import os\n\n\ndef add(a, b):\n    os.abort()\n",
    "exit": "import os\n\n\ndef add(a, b):\n    os._exit(3)\n",
}


# the shipped reference: written apart from SOLUTIONS["good"], which a grader must not take
# for a copy of it
REFERENCE = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    product = a * b\n    return product\n"


def write_toy(root: Path) -> Path:
    """A catalog with one ready toy exercise and one planned one."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "catalog.yaml").write_text(
        "- name: toy\n  status: ready\n- name: later\n  status: planned\n", encoding="utf-8"
    )
    toy = root / "toy"
    for sub in ("grader", "starter", "solution"):
        (toy / sub).mkdir(parents=True)
    (toy / "exercise.yaml").write_text(textwrap.dedent(TOY_META), encoding="utf-8")
    (toy / "README.md").write_text("# Toy\n", encoding="utf-8")
    (toy / "grader" / "test_toy.py").write_text(TOY_GRADER, encoding="utf-8")
    (toy / "starter" / "toy.py").write_text("def add(a, b):\n    raise NotImplementedError\n")
    (toy / "starter" / "toy_other.py").write_text("# other track\n")
    (toy / "solution" / "toy.py").write_text(REFERENCE)
    return root


@pytest.fixture
def toy_root(tmp_path: Path) -> Path:
    return write_toy(tmp_path / "exercises")


@pytest.fixture
def toy_catalog(toy_root: Path) -> Catalog:
    return load_catalog(toy_root)


@pytest.fixture
def toy(toy_catalog: Catalog) -> Exercise:
    return toy_catalog.get("toy")


@pytest.fixture
def solution_file(tmp_path: Path):  # type: ignore[no-untyped-def]
    def make(kind: str) -> Path:
        path = tmp_path / "work" / f"{kind}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(SOLUTIONS[kind], encoding="utf-8")
        return path

    return make


@pytest.fixture(autouse=True)
def _workspace_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUIZZER_WORKSPACE", str(tmp_path / "workspace"))
    monkeypatch.delenv("QUIZZER_EXERCISES_DIR", raising=False)
