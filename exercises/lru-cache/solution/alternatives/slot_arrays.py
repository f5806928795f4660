# alternative: a doubly linked list in parallel lists indexed by slot, a free list, __slots__
"""lru-cache, slot-array variant.

No OrderedDict, no functools.lru_cache / functools.cache: the recency order is a doubly
linked list stored in parallel Python lists indexed by slot number (slot 0 is the sentinel),
with a free list of slots. The class uses __slots__, so instances have no __dict__.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

MISS = -1


class LRUCache:
    __slots__ = ("_free", "_keys", "_next", "_prev", "_vals", "cache", "capacity")

    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError(f"capacity must be >= 0, got {capacity}")
        self.capacity = capacity
        self.cache: dict = {}  # key -> slot
        # slot 0: sentinel. _next[0] = most recent, _prev[0] = least recent.
        self._prev = [0]
        self._next = [0]
        self._keys: list = [None]
        self._vals: list = [None]
        self._free: list = []

    def _unlink(self, s: int) -> None:
        p, n = self._prev[s], self._next[s]
        self._next[p] = n
        self._prev[n] = p

    def _push_front(self, s: int) -> None:
        first = self._next[0]
        self._prev[s] = 0
        self._next[s] = first
        self._prev[first] = s
        self._next[0] = s

    def get(self, key: Hashable) -> Any:
        s = self.cache.get(key, 0)
        if s == 0:
            return MISS
        if self._next[0] != s:
            self._unlink(s)
            self._push_front(s)
        return self._vals[s]

    def put(self, key: Hashable, value: Any) -> None:
        s = self.cache.get(key, 0)
        if s:
            self._vals[s] = value
            self._unlink(s)
            self._push_front(s)
            return
        if self.capacity == 0:
            return
        if len(self.cache) >= self.capacity:
            lru = self._prev[0]
            self._unlink(lru)
            del self.cache[self._keys[lru]]
            self._keys[lru] = None
            self._vals[lru] = None
            self._free.append(lru)
        if self._free:
            s = self._free.pop()
        else:
            s = len(self._keys)
            self._prev.append(0)
            self._next.append(0)
            self._keys.append(None)
            self._vals.append(None)
        self._keys[s] = key
        self._vals[s] = value
        self.cache[key] = s
        self._push_front(s)

    def __len__(self) -> int:
        return len(self.cache)

    def __contains__(self, key: object) -> bool:
        return key in self.cache
