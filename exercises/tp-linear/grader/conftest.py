"""tp-linear grader fixtures: one gloo process group per world size, shared by the tests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside the tests

import _tp_group
from _tp_group import GroupRun, run_group

WORLD_SIZES = [2, 4]
_RUNS: dict[int, GroupRun] = {}


@pytest.fixture(scope="session", autouse=True)
def _forkserver() -> None:
    _tp_group.warm_up()


@pytest.fixture(scope="module", params=WORLD_SIZES, ids=lambda w: f"W={w}")
def tp(request: pytest.FixtureRequest, solution_path: Any) -> GroupRun:
    """Every case of one world size, run once in one group of processes; pytest runs
    every test of W=2 before those of W=4."""
    world = int(request.param)
    if world not in _RUNS:
        _RUNS[world] = run_group(world, str(solution_path))
    return _RUNS[world]
