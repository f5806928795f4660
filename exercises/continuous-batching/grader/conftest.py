"""continuous-batching grader fixtures: the user's scheduler module, checked for the names
the README's interface asks for."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside the tests

NAMES = ("SchedulerConfig", "Scheduler")
METHODS = ("add_request", "schedule", "on_step_done", "num_free_blocks")


@pytest.fixture
def sched(solution: ModuleType) -> ModuleType:
    """The user's module, once it defines the interface (README, Interface)."""
    missing = [name for name in NAMES if not callable(getattr(solution, name, None))]
    if missing:
        pytest.fail(
            f"scheduler.py must define {' and '.join(missing)} (README, Interface)",
            pytrace=False,
        )
    absent = [m for m in METHODS if not callable(getattr(solution.Scheduler, m, None))]
    if absent:
        pytest.fail(f"Scheduler has no method {', '.join(absent)}()", pytrace=False)
    return solution
