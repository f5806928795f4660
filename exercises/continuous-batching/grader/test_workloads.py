"""Grader for continuous-batching, part 2: seeded random workloads in four families (a pool
barely larger than the largest request, a budget of a few tokens, a roomy pool, a mix). A
failure is shrunk to a smallest workload that still breaks the same property."""

from __future__ import annotations

from types import ModuleType

import pytest
from _cb_check import Violation, run
from _cb_fuzz import FAMILIES, shrink, workload

SEEDS = 120


@pytest.mark.parametrize("family", list(FAMILIES))
def test_fuzz(sched: ModuleType, family: str) -> None:
    for seed in range(SEEDS):
        w = workload(family, seed)
        try:
            run(sched, w)
        except Violation as v:
            if v.key in ("not-implemented", "interface"):
                pytest.fail(v.message, pytrace=False)
            small = shrink(sched, w, v.key)
            try:
                run(sched, small)
            except Violation as again:
                v = again
            pytest.fail(
                f"{v.message}\n  smallest failing workload (family {family}, seed {seed}, "
                f"shrunk from {len(w.requests)} to {len(small.requests)} requests): "
                f"{small.describe()}",
                pytrace=False,
            )
