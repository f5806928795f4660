"""Grader for lru-cache: ``LRUCache(capacity)`` with ``get``, ``put``, ``len`` and ``in``.

Checks, in order: no ready-made LRU machinery (nor a heap or sorted list) in the file or
reachable from an instance; a negative capacity raises; targeted scenarios, each naming one
property (eviction of the least recently used key, get and put-update refresh recency, a
stored -1 is a hit, two caches are independent, values come back as the very object put,
keys compare as dict keys do, an update evicts nothing, ``in`` does not refresh, capacities 0
and 1, len <= capacity, None and falsy keys and values); seeded fuzz against an OrderedDict
model. test_lru_cost.py then checks memory and time per call.
Every expected result comes from the model in _lru_model, replayed on the same calls.
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from types import ModuleType
from typing import Any

import pytest
from _lru_inspect import ready_made_parts
from _lru_model import ArrayLike, Session, mismatch, same, show
from _lru_rules import forbidden_uses, log_n_uses

# ---------------------------------------------------------------- helpers


def fmt(entries: dict[Hashable, Any]) -> str:
    return "{" + ", ".join(f"{show(k)}: {show(v)}" for k, v in entries.items()) + "}"


def assert_holds(s: Session, prop: str) -> None:
    """The user's cache holds exactly what the model holds (keys and values)."""
    calls = s.tail(len(s.history))
    expected = dict(s.model.entries)
    held = s.holdings(s.keys)
    if held.keys() == expected.keys() and all(same(held[k], v) for k, v in expected.items()):
        return
    lost = [show(k) for k in expected if k not in held]
    extra = [show(k) for k in held if k not in expected]
    wrong = [
        f"get({show(k)}) {mismatch(held[k], v)}"
        for k, v in expected.items()
        if k in held and not same(held[k], v)
    ]
    why = []
    if lost:
        why.append(f"lost {', '.join(lost)}")
    if extra:
        why.append(f"still holds {', '.join(extra)}")
    if wrong:
        why.append(f"wrong values {', '.join(wrong)}")
    pytest.fail(
        f"{prop}: after {calls} the cache should hold {fmt(expected)} (least recently used "
        f"first) but holds {fmt(held)}: {'; '.join(why)}",
        pytrace=False,
    )


def check_len(s: Session) -> None:
    got, want = s.length()
    if isinstance(got, int) and got == want:  # the model never exceeds the capacity
        return
    calls = f"{s.tail(16)} ({s.label})"
    assert isinstance(got, int), f"len(cache) returned {show(got)}, expected an int"
    assert got <= s.capacity, f"len(cache) = {got} exceeds the capacity {s.capacity} after {calls}"
    assert got == want, (
        f"len(cache) = {got}, expected {want} (the number of keys held) after {calls}"
    )


# ---------------------------------------------------------------- rules and interface


def test_no_ready_made_lru(source: str) -> None:
    found = forbidden_uses(source)
    assert not found, (
        "lru_cache.py may not use collections.OrderedDict, functools.lru_cache / "
        "functools.cache or a cache package: the exercise is to build the recency order "
        "yourself (a dict of nodes plus a doubly linked list). Found: " + "; ".join(found)
    )


def test_negative_capacity_raises(lru: type) -> None:
    try:
        lru(-1)
    except ValueError:
        return
    except NotImplementedError as exc:
        pytest.fail(
            f"LRUCache.__init__ is not implemented yet (NotImplementedError: {exc})",
            pytrace=False,
        )
    except Exception as exc:
        pytest.fail(
            f"LRUCache(-1) raised {type(exc).__name__}: {exc}; raise ValueError for a negative "
            "capacity",
            pytrace=False,
        )
    pytest.fail("LRUCache(-1) must raise ValueError (a negative capacity), it returned normally")


def test_no_heap_or_sorted_order(source: str) -> None:
    found = log_n_uses(source)
    assert not found, (
        "get() and put() must be O(1): a heap (heapq) or a sorted sequence (bisect, "
        "sortedcontainers) costs O(log n) per call, so it may not keep the recency order "
        "(README, Constraints). Found: " + "; ".join(found)
    )


def test_no_ready_made_lru_objects(lru: type, solution: ModuleType) -> None:
    """The same rule at run time: nothing reachable from an instance, or from the module's
    globals, classes and functions, is an OrderedDict or an lru_cache wrapper."""
    s = Session(lru, 4)
    for key in "abcde":
        s.put(key, key.upper())
        s.get("a")
    bad = ready_made_parts(s.cache, solution)
    assert not bad, (
        "ready-made LRU machinery is not allowed, however it is reached (README, "
        "Constraints: no collections.OrderedDict, functools.lru_cache / functools.cache): "
        + "; ".join(bad[:6])
    )


# ---------------------------------------------------------------- targeted behaviour


def scenario(lru: type, capacity: int, script: list[tuple[Any, ...]], prop: str) -> Session:
    """Run ``script`` on a fresh cache and on the model, then compare what each holds."""
    s = Session(lru, capacity, prop=prop)
    s.run(script)
    assert_holds(s, prop)
    return s


def test_get_miss_returns_minus_one(lru: type) -> None:
    s = scenario(
        lru,
        2,
        [("get", "absent"), ("put", "a", 1), ("get", "b")],
        "get() of a key that is not cached must return -1",
    )
    check_len(s)


def test_put_then_get(lru: type) -> None:
    script = [("put", "a", 1), ("put", "b", 2.5), ("put", "c", "three")]
    script += [("get", "c"), ("get", "a"), ("get", "b")]
    s = scenario(lru, 3, script, "get() must return the value stored by put()")
    check_len(s)


def test_evicts_least_recently_used(lru: type) -> None:
    scenario(
        lru,
        3,
        [("put", "a", 1), ("put", "b", 2), ("put", "c", 3), ("put", "d", 4)],
        "a put() into a full cache must evict the least recently used key",
    )


def test_get_refreshes_recency(lru: type) -> None:
    scenario(
        lru,
        2,
        [("put", "a", 1), ("put", "b", 2), ("get", "a"), ("put", "c", 3)],
        "get() must refresh recency: a hit makes the key the most recently used, so put(c) "
        "evicts b",
    )


def test_put_update_replaces_value_and_evicts_nothing(lru: type) -> None:
    s = scenario(
        lru,
        3,
        [("put", "a", 1), ("put", "b", 2), ("put", "c", 3), ("put", "b", 20)],
        "put() on a key already cached must replace its value and evict nothing",
    )
    check_len(s)


def test_put_update_refreshes_recency(lru: type) -> None:
    scenario(
        lru,
        2,
        [("put", "a", 1), ("put", "b", 2), ("put", "a", 10), ("put", "c", 3)],
        "put() on a key already cached must refresh its recency, so put(c) evicts b",
    )


def test_in_does_not_refresh(lru: type) -> None:
    scenario(
        lru,
        2,
        [("put", "a", 1), ("put", "b", 2), ("in", "a"), ("in", "zz"), ("put", "c", 3)],
        "`key in cache` must not refresh recency (it only tests membership), so put(c) evicts a",
    )


def test_stored_minus_one_is_a_hit(lru: type) -> None:
    scenario(
        lru,
        2,
        [("put", "a", -1), ("put", "b", 2), ("get", "a"), ("put", "c", 3), ("in", "a")],
        "a stored -1 is a hit like any other value: get() returns it and makes the key the "
        "most recently used, and `key in cache` is True (README: only a key that is not "
        "cached is a miss), so put(c) evicts b",
    )


def test_caches_are_independent(lru: type) -> None:
    prop = "two caches must be independent: what one holds is not in another"
    first = scenario(lru, 2, [("put", "x", 1), ("put", "y", 2)], prop)
    second = scenario(lru, 3, [("get", "x"), ("in", "y"), ("put", "z", 3)], prop)
    check_len(second)
    first.prop = prop
    assert_holds(first, prop)
    check_len(first)


VALUES: list[Any] = [[1, 2], {"k": 1}, -1.0, object(), ArrayLike(1, 2, 3), set()]


def test_values_come_back_as_the_object_put(lru: type) -> None:
    keys = [f"v{i}" for i in range(len(VALUES))]
    script: list[tuple[Any, ...]] = [("put", k, v) for k, v in zip(keys, VALUES, strict=True)]
    script += [("get", k) for k in keys]
    s = scenario(
        lru,
        len(VALUES),
        script,
        "values are any objects: get() must return the very object put (not a copy, not -1 "
        "for -1.0) and must not compare it with == (an array cannot be)",
    )
    check_len(s)


def _equal_keys() -> list[tuple[Any, ...]]:
    """put() with some keys, get() and ``in`` with equal keys built separately (other
    objects: a dict finds them), with look-alikes (1 and "1", None and "None"), with keys of
    equal hash (-1 and -2), and with equal keys of another type (1.0 and True equal 1)."""
    word, number, pair = "".join(["ke", "y"]), int("1000001"), tuple(["k", 1000001])
    script: list[tuple[Any, ...]] = [
        ("put", word, "w"),
        ("put", number, "n"),
        ("put", pair, "p"),
        ("put", 1, "one"),
        ("put", -2, "minus two"),
        ("put", None, "none"),
    ]
    script += [("get", "".join(["k", "ey"])), ("get", int("1000001"))]
    script += [("in", tuple(["k", int("1000001")])), ("get", tuple(["k", 1000001]))]
    script += [("get", "1"), ("in", "None"), ("get", -1), ("get", 1.0), ("in", True)]
    script += [("put", True, "true"), ("put", "1", "string one"), ("get", 1)]
    return script


def test_keys_compare_as_dict_keys(lru: type) -> None:
    s = scenario(
        lru,
        7,
        _equal_keys(),
        "keys compare as dict keys do: an equal key is the same key even when it is another "
        "object (a string or tuple built again, 1.0 or True for 1); 1 and '1', None and "
        "'None', -1 and -2 (equal hashes) are different keys",
    )
    check_len(s)


INTERLEAVED: list[tuple[Any, ...]] = [
    ("put", "a", 1),
    ("put", "b", 2),
    ("put", "c", 3),
    ("get", "a"),
    ("put", "d", 4),  # evicts b
    ("get", "c"),
    ("put", "a", 11),
    ("put", "e", 5),  # evicts d
    ("get", "zz"),
    ("put", "f", 6),  # evicts c
]


@pytest.mark.parametrize("steps", [5, 6, 8, 10])
def test_eviction_order_follows_last_use(lru: type, steps: int) -> None:
    scenario(
        lru,
        3,
        INTERLEAVED[:steps],
        "the key evicted must be the one whose last get() or put() is the oldest",
    )


def test_capacity_zero_stores_nothing(lru: type) -> None:
    script = [("put", "a", 1), ("get", "a"), ("put", "b", 2), ("put", "b", 3), ("in", "b")]
    s = scenario(lru, 0, script, "capacity 0 stores nothing (every get() misses)")
    check_len(s)


def test_capacity_one(lru: type) -> None:
    script = [("put", "a", 1), ("get", "a"), ("put", "a", 2), ("get", "a"), ("put", "b", 3)]
    s = scenario(lru, 1, script, "capacity 1 keeps only the last key put")
    check_len(s)


def test_len_counts_keys_up_to_capacity(lru: type) -> None:
    s = Session(lru, 3)
    for i in range(8):
        s.put(f"k{i}", i)
        check_len(s)
        s.put(f"k{i}", -i - 10)  # an update: the length stays the same
        check_len(s)


FALSY_ITEMS: list[tuple[Hashable, Any]] = [
    (0, None),
    ("", 0),
    (None, ""),
    ((), False),
    (frozenset(), 0.0),
    (b"", []),
]


def test_none_and_falsy_keys_and_values(lru: type) -> None:
    script: list[tuple[Any, ...]] = [("put", k, v) for k, v in FALSY_ITEMS]
    script += [(op, k) for k, _ in FALSY_ITEMS for op in ("get", "in")]
    s = scenario(
        lru,
        len(FALSY_ITEMS),
        script,
        "None and falsy keys and values (0, '', False, None, ...) must be stored and "
        "returned as they are",
    )
    check_len(s)


# ---------------------------------------------------------------- seeded fuzz


def rebuilt(key: Hashable) -> Hashable:
    """An equal key that is another object where Python allows it (a dict finds it)."""
    if isinstance(key, str) and len(key) > 1:
        return "".join(list(key))
    if type(key) is int and not -5 <= key <= 256:
        return int(str(key))
    if isinstance(key, tuple) and key:
        return tuple(rebuilt(item) for item in key)
    return key


def fuzz(
    s: Session,
    rng: random.Random,
    keys: list[Hashable],
    values: list[Any],
    steps: int,
    fresh: bool = False,
) -> None:
    """Random put/get/in calls (45/40/15 %), each checked against the model."""
    for step in range(steps):
        key = rng.choice(keys)
        key = rebuilt(key) if fresh else key
        draw = rng.random()
        if draw < 0.45:
            s.put(key, values[step % len(values)] if values else f"v{step}")
            continue
        if draw < 0.85:
            got, want = s.get(key)
            ok = same(got, want)
        else:
            got, want = s.contains(key)
            ok = got is want
        assert ok, (
            f"the cache disagrees with an LRU model at step {len(s.history) - 1}: "
            f"{s.call()} {mismatch(got, want)} ({s.label}); the "
            f"last calls were: {s.tail()}"
        )
        if step % 8 == 0:
            check_len(s)


@pytest.mark.parametrize("capacity", [0, 1, 2, 3, 8, 64])
def test_fuzz_against_model(lru: type, capacity: int) -> None:
    # capacity 0 has one answer to every call (a miss): one seed covers it
    for seed in range(1 if capacity == 0 else 3):
        rng = random.Random(7919 * capacity + seed)
        s = Session(lru, capacity, label=f"fuzz, capacity {capacity}, seed {seed}")
        fuzz(s, rng, list(range(2 * capacity + 3)), [], steps=1500)
        check_len(s)


# falsy keys, look-alikes (1 / "1" / True / 1.0, None / "None"), equal hashes (-1 / -2)
MIXED_KEYS: list[Hashable] = [None, 0, "", (), "a", 2.5, (1, 2), frozenset({3}), b"", -7]
MIXED_KEYS += [1, "1", True, 1.0, "None", -1, -2, "(1, 2)", "key", 1000001, ("k", 1000001)]
# falsy values, -1 and -1.0 (a hit, not a miss), objects only identity can compare
MIXED_VALUES: list[Any] = [None, 0, "", False, [], "x", 0.0, (), 42, "v", -1, -1.0]
MIXED_VALUES += [ArrayLike(1, 2), {}, object(), [0]]


def test_fuzz_mixed_keys_and_values(lru: type) -> None:
    for capacity in (3, 6, 12):
        rng = random.Random(capacity)
        s = Session(lru, capacity, label=f"fuzz with mixed keys, capacity {capacity}")
        fuzz(s, rng, MIXED_KEYS, MIXED_VALUES, steps=1200, fresh=True)
