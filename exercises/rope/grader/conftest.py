"""rope grader fixtures: the user's apply_rope."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside the tests

from _harness import Rope


@pytest.fixture
def apply_rope(solution: ModuleType) -> Rope:
    fn = getattr(solution, "apply_rope", None)
    if not callable(fn):
        pytest.fail(
            "rope.py must define apply_rope(q, k, positions, base, layout, rotary_dim)",
            pytrace=False,
        )
    return fn
