"""Seeded random workloads, and shrinking a failing one to a smallest failing workload."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from types import ModuleType

from _cb_check import Violation, Workload, run
from _cb_model import ceil_div

# family -> (block sizes, extra blocks over the largest request, budgets, max_num_seqs)
FAMILIES: dict[str, tuple[list[int], list[int], list[int], list[int]]] = {
    "tight-pool": ([2, 4, 4, 8], [0, 0, 1, 2], [4, 8, 16, 64], [2, 4, 8]),
    "tiny-budget": ([1, 2, 4], [0, 2, 8, 40], [1, 2, 3, 5], [1, 2, 4]),
    "roomy": ([4, 8], [10, 40], [8, 16, 32], [1, 2, 3, 8]),
    "mixed": ([1, 2, 3, 4, 8], [0, 1, 3, 6, 20], [1, 3, 6, 8, 12, 32], [1, 2, 3, 5, 8]),
}
MAX_SHRINK_RUNS = 400


def workload(family: str, seed: int) -> Workload:
    """A reproducible workload of ``family`` (arrivals spread over the first steps)."""
    sizes, extras, budgets, seqs = FAMILIES[family]
    rng = random.Random(f"{family}:{seed}")
    bs = rng.choice(sizes)
    reqs = []
    for i in range(rng.randint(1, 9)):
        arrival = 0 if rng.random() < 0.4 else rng.randint(0, 14)
        reqs.append((f"r{i}", rng.randint(1, 24), rng.randint(1, 8), arrival))
    need = max(ceil_div(p + m - 1, bs) for _, p, m, _ in reqs)
    return Workload(
        block_size=bs,
        num_blocks=need + rng.choice(extras),
        budget=rng.choice(budgets),
        max_seqs=rng.choice(seqs),
        requests=tuple(reqs),
    )


def _smaller(w: Workload) -> Iterator[Workload]:
    reqs = list(w.requests)
    for i in range(len(reqs)):
        yield replace(w, requests=tuple(reqs[:i] + reqs[i + 1 :]))
    for i, (rid, p, m, t) in enumerate(reqs):
        for change in (
            (rid, 1, m, t),
            (rid, p // 2, m, t),
            (rid, p - 1, m, t),
            (rid, p, 1, t),
            (rid, p, m - 1, t),
            (rid, p, m, 0),
            (rid, p, m, t - 1),
        ):
            if change != reqs[i] and min(change[1:]) >= 0:
                yield replace(w, requests=(*reqs[:i], change, *reqs[i + 1 :]))
    for blocks in (w.num_blocks - 1, w.num_blocks // 2):
        yield replace(w, num_blocks=blocks)


def _key(module: ModuleType, w: Workload) -> str | None:
    try:
        run(module, w)
    except Violation as v:
        return v.key
    return None


def shrink(module: ModuleType, w: Workload, key: str) -> Workload:
    """Greedily drop requests and shrink prompts, outputs, arrivals and the pool while the
    workload still fails with the same kind of violation."""
    runs = 0
    improved = True
    while improved and runs < MAX_SHRINK_RUNS:
        improved = False
        for cand in _smaller(w):
            if not cand.requests or not cand.valid():
                continue
            runs += 1
            if _key(module, cand) == key:
                w, improved = cand, True
                break
            if runs >= MAX_SHRINK_RUNS:
                break
    return w
