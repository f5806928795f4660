"""lru-cache costs: memory that stays bounded at a constant capacity, and time per call that
does not grow with the number of entries (O(1)). They run after the behaviour checks in
test_lru_cache.py, on caches those checks have shown to answer correctly."""

from __future__ import annotations

import gc
import random
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pytest
from _lru_inspect import retained_growth
from _lru_model import call_user

# ---------------------------------------------------------------- bounded memory

MEMORY_CAPACITY = 16
ROUNDS_EACH = 1_000  # rounds of each kind, warm-up and measured
MAX_GROWTH = 32 * 1024  # bytes; a dict and a linked list at a fixed size grow by nothing


def memory_rounds(cache: Any, first: int, rounds: int, insert: bool) -> Callable[[], None]:
    """Rounds of calls on a full cache: a hit on a hot key, a miss, ``in`` of a missing key,
    an update and, with ``insert``, an insert of a new key (which evicts)."""
    values = [object() for _ in range(4)]
    get, put, contains = cache.get, cache.put, cache.__contains__

    def run() -> None:
        for r in range(first, first + rounds):
            get(r % 4)
            get(-r - 1000)
            contains(-r - 1000)
            put(r % 4, values[r % 4])
            if insert:
                put(r + MEMORY_CAPACITY, r)

    return run


def test_memory_stays_bounded(lru: type) -> None:
    cache = call_user(f"LRUCache({MEMORY_CAPACITY})", lru, MEMORY_CAPACITY)
    for key in range(MEMORY_CAPACITY):
        call_user(f"put({key}, {key})", cache.put, key, key)
    warm = memory_rounds(cache, 0, ROUNDS_EACH, insert=True)
    evicting = memory_rounds(cache, ROUNDS_EACH, ROUNDS_EACH, insert=True)
    hits_only = memory_rounds(cache, 2 * ROUNDS_EACH, ROUNDS_EACH, insert=False)

    def measured() -> None:
        evicting()
        hits_only()  # last: what stale records only an eviction would drop stays measured

    grown = call_user(
        f"get/put/in calls on LRUCache({MEMORY_CAPACITY})", retained_growth, warm, measured
    )
    assert grown <= MAX_GROWTH, (
        f"memory grows with the number of calls: a cache of capacity {MEMORY_CAPACITY} "
        f"kept {grown / 1024:.0f} KiB more after {9 * ROUNDS_EACH} more calls (hits, misses, "
        "`in`, updates, evicting inserts, then a run without inserts; README: memory is "
        "O(capacity) whatever the number of calls, and a get miss or `in` stores nothing). "
        "Look for records appended on every use and dropped late or never (a log or queue "
        "of stale entries), or placeholders left by misses (defaultdict, setdefault)."
    )
    got = call_user("len(cache)", len, cache)
    assert got == MEMORY_CAPACITY, f"after the calls len(cache) = {got}, expected {MEMORY_CAPACITY}"


# ---------------------------------------------------------------- O(1)

SMALL, LARGE = 100, 50_000
ROUNDS, REPS = 50, 5  # REPS chunks of ROUNDS x 4 timed calls per size; the best chunk counts
MAX_RATIO = 8.0  # a dict + linked list measures ~1-3x here, list scans and min() 200x+
FILL_BUDGET_S = 3.0
TIMED_BUDGET_S = 1.5

Call = tuple[Callable[..., Any], tuple[Any, ...]]


def timed_calls(cache: Any, n: int, rounds: int, seed: int) -> list[Call]:
    """Rounds of four calls on a cache filled with keys 0..n-1 (least recent first): get the
    least recently used key, update a random key, get a random key, insert a new key (which
    evicts). Planned on a model so that every get is a hit."""
    rng = random.Random(seed)
    order = OrderedDict.fromkeys(range(n))
    present = list(range(n))
    slot = {k: k for k in range(n)}
    calls: list[Call] = []
    new = n
    for r in range(rounds):
        lru_key = next(iter(order))
        order.move_to_end(lru_key)
        calls.append((cache.get, (lru_key,)))
        update, hit = present[rng.randrange(n)], present[rng.randrange(n)]
        order.move_to_end(update)
        order.move_to_end(hit)
        calls += [(cache.put, (update, r)), (cache.get, (hit,))]
        old, _ = order.popitem(last=False)
        order[new] = None
        index = slot.pop(old)
        present[index] = new
        slot[new] = index
        calls.append((cache.put, (new, r)))
        new += 1
    return calls


def fill_keys(cache: Any, keys: range) -> None:
    """put(key, key) for each key."""
    put = cache.put
    for key in keys:
        put(key, key)


def filled(lru: type, n: int) -> Any:
    """A cache of capacity ``n`` filled with keys 0..n-1, within the time budget."""
    cache = call_user(f"LRUCache({n})", lru, n)
    start = time.perf_counter()
    for first in range(0, n, 1000):
        keys = range(first, min(n, first + 1000))
        call_user(
            f"put(key, key) for keys {first}..{keys[-1]} of LRUCache({n})", fill_keys, cache, keys
        )
        elapsed = time.perf_counter() - start
        if elapsed > FILL_BUDGET_S:
            pytest.fail(
                f"put() is not O(1): filling LRUCache({n}) took more than {FILL_BUDGET_S:g} s "
                f"({first + 1000} puts in {elapsed:.1f} s); a put must not scan the entries",
                pytrace=False,
            )
    return cache


def run_chunk(calls: list[Call]) -> float:
    start = time.perf_counter()
    for method, args in calls:
        method(*args)
    return (time.perf_counter() - start) / len(calls)


def test_get_and_put_are_o1(lru: type, record_metric: Callable[[str, float, str], None]) -> None:
    small, large = filled(lru, SMALL), filled(lru, LARGE)
    plans = {
        n: timed_calls(cache, n, ROUNDS * REPS, seed=n)
        for n, cache in ((SMALL, small), (LARGE, large))
    }
    chunk = ROUNDS * 4
    best = {SMALL: float("inf"), LARGE: float("inf")}
    spent = 0.0
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for rep in range(REPS):
            for n in (SMALL, LARGE):
                part = plans[n][rep * chunk : (rep + 1) * chunk]
                per_call = call_user(f"timed get/put calls on LRUCache({n})", run_chunk, part)
                best[n] = min(best[n], per_call)
                if n == LARGE:
                    spent += per_call * chunk
            if spent > TIMED_BUDGET_S:
                break
    finally:
        if was_enabled:
            gc.enable()
    ratio = best[LARGE] / best[SMALL]
    record_metric(f"time per call at {LARGE} vs {SMALL} entries", ratio, "x")
    record_metric(f"time per call at {LARGE} entries", best[LARGE] * 1e6, "us")
    assert ratio <= MAX_RATIO, (
        f"get/put are not O(1): one call takes {best[LARGE] * 1e6:.2f} us on a cache of "
        f"{LARGE} entries and {best[SMALL] * 1e6:.2f} us on one of {SMALL} ({ratio:.0f}x; "
        f"allowed up to {MAX_RATIO:g}x). The calls hit the least recently used end, random "
        "keys, and inserts that evict: list.remove, list.index, pop(0), insert(0, ...) or "
        "min() over timestamps all scan the entries. Keep a dict of nodes and a doubly "
        "linked list."
    )
    got, want = call_user("len(cache)", len, large), LARGE
    assert got == want, f"after the timed calls len(cache) = {got}, expected {want}"
