"""gqa grader fixtures: built-in attention refused, the user's class wrapped in a Harness."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside the tests

from gqa_harness import Guard, Harness


@pytest.fixture(autouse=True)
def guard(monkeypatch: pytest.MonkeyPatch) -> Guard:
    """Installed before the solution is imported (autouse fixtures run first)."""
    g = Guard()
    g.install(monkeypatch)
    return g


@pytest.fixture
def gqa(guard: Guard, solution: ModuleType) -> Harness:
    cls = getattr(solution, "GroupedQueryAttention", None)
    if not isinstance(cls, type):
        pytest.fail(
            "gqa.py must define class GroupedQueryAttention(torch.nn.Module)", pytrace=False
        )
    return Harness(cls, guard)
