"""The grader's own LRU model (an OrderedDict, which the user may not use) and a session
that replays every call on the user's cache and on the model, logging them for messages."""

from __future__ import annotations

import operator
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import partial
from typing import Any

import pytest

MISS = -1
TAIL = 8  # operations shown before the one that went wrong


class Model:
    """LRU by the book: the OrderedDict runs from least to most recently used."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.entries: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable) -> Any:
        """The stored object (now the most recent), or MISS."""
        if key not in self.entries:
            return MISS
        self.entries.move_to_end(key)
        return self.entries[key]

    def put(self, key: Hashable, value: Any) -> None:
        """Update in place (no eviction) or insert, evicting the least recent when full."""
        if key in self.entries:
            self.entries[key] = value
            self.entries.move_to_end(key)
            return
        if self.capacity == 0:
            return
        if len(self.entries) == self.capacity:
            self.entries.popitem(last=False)
        self.entries[key] = value

    def contains(self, key: Hashable) -> bool:
        """Membership; the order does not change."""
        return key in self.entries

    def __len__(self) -> int:
        return len(self.entries)


class Elementwise:
    """What ``array == x`` gives for an array-like value: its truth value is ambiguous."""

    def __bool__(self) -> bool:
        raise ValueError(
            "the truth value of an array with more than one element is ambiguous "
            "(the cache compared a stored value with ==)"
        )


class ArrayLike:
    """A value that, like a numpy array, cannot be tested with ``==`` and is not hashable."""

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, *items: int) -> None:
        self.items = items

    def __eq__(self, other: object) -> Elementwise:  # type: ignore[override]
        return Elementwise()

    def __ne__(self, other: object) -> Elementwise:  # type: ignore[override]
        return Elementwise()

    def __repr__(self) -> str:
        return f"array({list(self.items)})"


def is_miss(got: Any) -> bool:
    """get()'s miss answer: the int -1 (not -1.0, not True-ish look-alikes)."""
    return type(got) is int and got == MISS


def same(got: Any, expected: Any) -> bool:
    """get() returned what the model expects: the very object that was put, or -1 for -1."""
    return got is expected or (is_miss(expected) and is_miss(got))


def _equal(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def mismatch(got: Any, expected: Any) -> str:
    """``returned X, expected Y``, saying so when X is an equal copy of the object put."""
    text = f"returned {show(got)}, expected {show(expected)}"
    if got is not expected and not is_miss(expected) and _equal(got, expected):
        text += (
            " (an equal copy, not the object that was put: get() must return exactly the "
            "object stored by put())"
        )
    return text


def show(value: Any) -> str:
    """A short repr for messages."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def call_user(what: str | Callable[[], str], fn: Any, *args: Any) -> Any:
    """Call into the user's cache; turn an exception into a one-line failure. ``what`` (or
    what it returns: built only when needed) says which call it was."""
    try:
        return fn(*args)
    except NotImplementedError as exc:
        text = what() if callable(what) else what
        name = getattr(fn, "__qualname__", text)
        pytest.fail(
            f"{name} is not implemented yet (NotImplementedError: {exc}); while running {text}",
            pytrace=False,
        )
    except Exception as exc:
        text = what() if callable(what) else what
        pytest.fail(f"{text} raised {type(exc).__name__}: {exc}", pytrace=False)


# caches made from each LRUCache class so far (each check imports the file afresh)
_MADE: weakref.WeakKeyDictionary[type, int] = weakref.WeakKeyDictionary()


class Session:
    """One user cache and one model, fed the same calls; ``history`` says what happened."""

    def __init__(self, cls: type, capacity: int, label: str = "", prop: str = "") -> None:
        self.prop = prop  # the property a scenario checks, named in every failure
        self.capacity = capacity
        self.model = Model(capacity)
        # calls as (format, arguments), put into words only for a message
        self.history: list[tuple[str, tuple[Any, ...]]] = [("LRUCache({})", (capacity,))]
        self.keys: list[Hashable] = []  # every key put, in first-seen order
        earlier = _MADE.get(cls, 0)
        _MADE[cls] = earlier + 1
        self.label = (label or f"capacity {capacity}") + _earlier_note(earlier)
        self.cache = call_user(f"LRUCache({capacity})", cls, capacity)

    def call(self, index: int = -1) -> str:
        """One call in words, e.g. ``put('a', 1)``."""
        form, args = self.history[index]
        return form.format(*map(show, args))

    def tail(self, count: int = TAIL) -> str:
        """The last ``count`` calls, with how many came before them."""
        count = min(count, len(self.history))
        more = len(self.history) - count
        head = f"... ({more} earlier calls), " if more else ""
        return head + ", ".join(self.call(i) for i in range(more, len(self.history)))

    def _where(self) -> str:
        lead = f"{self.prop}: " if self.prop else ""
        step = len(self.history) - 1
        return f"{lead}step {step} `{self.call()}` ({self.label}; calls so far: {self.tail()})"

    def _call(self, form: str, args: tuple[Any, ...], fn: Any) -> Any:
        self.history.append((form, args))
        return call_user(self._where, fn, *args)

    def put(self, key: Hashable, value: Any) -> None:
        """put() on both caches."""
        self._call("put({}, {})", (key, value), self.cache.put)
        self.model.put(key, value)
        if key not in self.keys:
            self.keys.append(key)

    def get(self, key: Hashable) -> tuple[Any, Any]:
        """(what the user's cache returned, what the model expects)."""
        got = self._call("get({})", (key,), self.cache.get)
        return got, self.model.get(key)

    def contains(self, key: Hashable) -> tuple[Any, bool]:
        """(the user's ``key in cache``, the model's)."""
        got = self._call("{} in cache", (key,), partial(operator.contains, self.cache))
        return got, self.model.contains(key)

    def length(self) -> tuple[Any, int]:
        """(the user's len(cache), the model's)."""
        got = self._call("len(cache)", (), self.cache.__len__)
        return got, len(self.model)

    def run(self, script: list[tuple[Any, ...]]) -> None:
        """Apply ("put", k, v) / ("get", k) / ("in", k) steps; a get or `in` that disagrees
        with the model fails at once, naming the property the scenario checks."""
        for op, *args in script:
            if op == "put":
                self.put(*args)
                continue
            got, want = self.get(*args) if op == "get" else self.contains(*args)
            if not (same(got, want) if op == "get" else got is want):
                lead = f"{self.prop}: " if self.prop else ""
                pytest.fail(
                    f"{lead}{self.call()} {mismatch(got, want)} "
                    f"({self.label}; calls: {self.tail(len(self.history))})",
                    pytrace=False,
                )

    def _probing(self, key: Hashable) -> str:
        return f"{self.prop}: probing {show(key)} after {self.tail(len(self.history))}"

    def holdings(self, keys: list[Hashable]) -> dict[Hashable, Any]:
        """Which of ``keys`` the user's cache holds, and their values, probed with ``in`` and
        get() at the very end of a scenario (a probe refreshes recency but never changes what
        is held). ``in`` tells a stored -1 from a miss."""
        held = {}
        for key in keys:
            what = partial(self._probing, key)
            present = call_user(what, operator.contains, self.cache, key)
            value = call_user(what, self.cache.get, key)
            if present or not is_miss(value):
                held[key] = value
        return held


def _earlier_note(earlier: int) -> str:
    if not earlier:
        return ""
    return (
        f"; {earlier} other LRUCache object(s) were made before this one in this check: if a "
        "fresh cache does not reproduce this, they share state with it (a class attribute "
        "or a global)"
    )
