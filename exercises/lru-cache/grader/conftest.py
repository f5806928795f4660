"""lru-cache grader fixtures: the user's LRUCache class and the source of their file."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _lru_model beside the tests

METHODS = ("get", "put", "__len__", "__contains__")


@pytest.fixture
def lru(solution: ModuleType) -> type:
    """The class under test; fails at once with what is missing."""
    cls = getattr(solution, "LRUCache", None)
    if not isinstance(cls, type):
        pytest.fail(
            "lru_cache.py must define class LRUCache(capacity) with get, put, __len__ and "
            "__contains__",
            pytrace=False,
        )
    missing = [name for name in METHODS if not callable(getattr(cls, name, None))]
    if missing:
        pytest.fail(f"LRUCache has no {', '.join(missing)}", pytrace=False)
    return cls


@pytest.fixture
def source(solution_path: Path) -> str:
    """The text of the user's file, for the checks on what it imports and uses."""
    return solution_path.read_text(encoding="utf-8")
