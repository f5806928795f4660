"""The grader's own LRU model (an OrderedDict, which the user may not use) and a session
that replays every call on the user's cache and on the model, logging them for messages."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
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
        if key not in self.entries:
            return MISS
        self.entries.move_to_end(key)
        return self.entries[key]

    def put(self, key: Hashable, value: Any) -> None:
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
        return key in self.entries

    def __len__(self) -> int:
        return len(self.entries)


def same(got: Any, expected: Any) -> bool:
    """Equal and of the same type: 0, False and 0.0 are different values here."""
    return got is expected or (type(got) is type(expected) and got == expected)


def show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def call_user(what: str, fn: Any, *args: Any) -> Any:
    """Call into the user's cache; turn an exception into a one-line failure."""
    try:
        return fn(*args)
    except NotImplementedError as exc:
        name = getattr(fn, "__qualname__", what)
        pytest.fail(
            f"{name} is not implemented yet (NotImplementedError: {exc}); while running {what}",
            pytrace=False,
        )
    except Exception as exc:
        pytest.fail(f"{what} raised {type(exc).__name__}: {exc}", pytrace=False)


class Session:
    """One user cache and one model, fed the same calls; ``history`` says what happened."""

    def __init__(self, cls: type, capacity: int, label: str = "", prop: str = "") -> None:
        self.label = label or f"capacity {capacity}"
        self.prop = prop  # the property a scenario checks, named in every failure
        self.capacity = capacity
        self.model = Model(capacity)
        self.history: list[str] = [f"LRUCache({capacity})"]
        self.keys: list[Hashable] = []  # every key put, in first-seen order
        self.cache = call_user(f"LRUCache({capacity})", cls, capacity)

    def tail(self, count: int = TAIL) -> str:
        shown = self.history[-count:]
        more = len(self.history) - len(shown)
        head = f"... ({more} earlier calls), " if more else ""
        return head + ", ".join(shown)

    def _call(self, text: str, fn: Any, *args: Any) -> Any:
        self.history.append(text)
        lead = f"{self.prop}: " if self.prop else ""
        step = len(self.history) - 1
        where = f"{lead}step {step} `{text}` ({self.label}; calls so far: {self.tail()})"
        return call_user(where, fn, *args)

    def put(self, key: Hashable, value: Any) -> None:
        self._call(f"put({show(key)}, {show(value)})", self.cache.put, key, value)
        self.model.put(key, value)
        if key not in self.keys:
            self.keys.append(key)

    def get(self, key: Hashable) -> tuple[Any, Any]:
        """(what the user's cache returned, what the model expects)."""
        got = self._call(f"get({show(key)})", self.cache.get, key)
        return got, self.model.get(key)

    def contains(self, key: Hashable) -> tuple[Any, bool]:
        got = self._call(f"{show(key)} in cache", self.cache.__contains__, key)
        return bool(got), self.model.contains(key)

    def length(self) -> tuple[Any, int]:
        got = self._call("len(cache)", self.cache.__len__)
        return got, len(self.model)

    def run(self, script: list[tuple[Any, ...]]) -> None:
        """Apply ("put", k, v) / ("get", k) / ("in", k) steps; a get or `in` that disagrees
        with the model fails at once, naming the property the scenario checks."""
        for op, *args in script:
            if op == "put":
                self.put(*args)
                continue
            got, want = self.get(*args) if op == "get" else self.contains(*args)
            if not same(got, want):
                lead = f"{self.prop}: " if self.prop else ""
                pytest.fail(
                    f"{lead}{self.history[-1]} returned {show(got)}, expected {show(want)} "
                    f"({self.label}; calls: {self.tail(len(self.history))})",
                    pytrace=False,
                )

    def holdings(self, keys: list[Hashable]) -> dict[Hashable, Any]:
        """Which of ``keys`` the user's cache holds, probed with get() at the very end of a
        scenario (a probe refreshes recency but never changes what is held)."""
        held = {}
        for key in keys:
            what = f"{self.prop}: get({show(key)}) after {self.tail(len(self.history))}"
            value = call_user(what, self.cache.get, key)
            if not same(value, MISS):
                held[key] = value
        return held
