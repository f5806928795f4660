"""lru-cache beyond the common meta-tests: the O(1) check records its time ratio, the
list-based mutant (right answers, linear time) is caught by that check alone, and the
grader's helpers (identity of values, the O(log n) rule, the walk for ready-made machinery,
the memory probe) are right on their own."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from quizzer.exercises.runner import grade

from .meta import CATALOG, explain

EXERCISE = CATALOG.get("lru-cache")
GRADER = EXERCISE.path / "grader"


def grader_module(name: str) -> ModuleType:
    """One of the grader's helper modules, imported from its file."""
    spec = importlib.util.spec_from_file_location(f"lru_grader_{name}", GRADER / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def user_module(tmp_path: Path, name: str, source: str) -> ModuleType:
    """``source`` imported as the user's module ``name`` (registered, as dataclasses need)."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


@pytest.mark.slow
def test_reference_records_the_o1_time_ratio() -> None:
    result = grade(EXERCISE, EXERCISE.solution_file(), device="cpu")
    assert result.status == "passed", explain(result)
    assert any(m.unit == "x" for m in result.metrics), "the O(1) check records its time ratio"


@pytest.mark.slow
def test_linear_scan_fails_only_the_o1_check() -> None:
    mutant = next(m for m in EXERCISE.meta.mutants if m.file == "linear_scan.py")
    result = grade(EXERCISE, EXERCISE.mutant_file(mutant), device="cpu")
    assert [t.name for t in result.failures] == ["test_get_and_put_are_o1"], explain(result)
    assert any(mutant.expect in t.message for t in result.failures), explain(result)


def test_a_hit_must_return_the_very_object_put() -> None:
    model = grader_module("_lru_model")
    value = [1, 2]
    assert model.same(value, value)
    assert not model.same([1, 2], value), "an equal copy is not the object that was put"
    assert not model.same(-1, -1.0), "-1.0 stored must come back as -1.0"
    assert model.same(-1, model.MISS) and not model.same(True, model.MISS)
    assert "an equal copy" in model.mismatch([1, 2], value)
    assert "copy" not in model.mismatch(2, value)
    array = model.ArrayLike(1, 2)
    assert model.same(array, array)
    assert "copy" not in model.mismatch(model.ArrayLike(1, 2), array)  # == cannot tell
    with pytest.raises(ValueError, match="ambiguous"):
        bool(array == -1)


def test_heap_and_sorted_modules_are_rejected_wherever_named() -> None:
    rules = grader_module("_lru_rules")
    found = rules.log_n_uses(
        'import heapq\nfrom bisect import insort\nimport importlib\nm = importlib.import_module("sortedcontainers")\n'
    )
    assert [f.split(":")[0] for f in found] == ["line 1", "line 2", "line 4"], found
    clean = (
        '"""Not a heap (heapq) nor bisect: a dict and a linked list."""\nimport collections.abc\n'
    )
    assert rules.log_n_uses(clean) == []


HIDDEN = """
    import importlib

    _OD = getattr(importlib.import_module("coll" + "ections"), "Ordered" + "Dict")


    class LRUCache:
        def __init__(self, capacity):
            self._box = [{"inner": (_OD(),)}]
"""

CLEAN = """
    from __future__ import annotations

    import functools
    import re
    import threading
    from dataclasses import dataclass
    from re import compile
    from typing import Any, Optional

    WORD = compile(r"\\w+")


    def _locked(method):
        @functools.wraps(method)
        def wrapper(self, *args):
            with self._lock:
                return method(self, *args)
        return wrapper


    @dataclass(eq=False)
    class Node:
        key: Any = None
        prev: Optional[Node] = None


    class LRUCache:
        def __init__(self, capacity):
            self._lock = threading.Lock()
            self._nodes = {"a": Node("a")}
            self._match = re.match
            self._head = Node()
            self._head.prev = self._head

        @_locked
        def get(self, key):
            return -1
"""


def test_ready_made_machinery_is_found_however_it_is_reached(tmp_path: Path) -> None:
    inspect = grader_module("_lru_inspect")
    module = user_module(tmp_path, "lru_hidden_user", HIDDEN)
    found = inspect.ready_made_parts(module.LRUCache(2), module)
    assert "_OD is the class collections.OrderedDict" in found, found
    assert "self._box[0]['inner'][0] is an OrderedDict" in found, found


def test_the_standard_library_behind_a_clean_file_is_not_flagged(tmp_path: Path) -> None:
    """re, typing and dataclasses use lru_cache inside: only the user's own objects count."""
    inspect = grader_module("_lru_inspect")
    module = user_module(tmp_path, "lru_clean_user", CLEAN)
    assert inspect.ready_made_parts(module.LRUCache(2), module) == []


def test_memory_probe_sees_what_is_kept_and_not_what_is_freed() -> None:
    inspect = grader_module("_lru_inspect")
    kept: list[tuple[int, str]] = []

    def leak() -> None:
        kept.extend((i, f"key{i}") for i in range(5000))

    def churn() -> None:
        for i in range(5000):
            _ = (i, f"key{i}")

    assert inspect.retained_growth(churn, leak) > 200_000
    assert inspect.retained_growth(churn, churn) < 4096
