# alternative: a plain dict in insertion order (pop and re-insert to refresh, first key = oldest)
"""lru-cache using only a plain dict's insertion order (README: allowed, not rejected).

Refresh = pop and re-insert (moves the key to the end); the least recently used key is
next(iter(d)). A sentinel object, not -1 or None, tells a miss from a hit.
"""

from __future__ import annotations

from typing import Any

MISS = -1
_ABSENT = object()


class LRUCache:
    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError("capacity must be >= 0")
        self.capacity = capacity
        self.cache: dict = {}

    def get(self, key) -> Any:
        value = self.cache.pop(key, _ABSENT)
        if value is _ABSENT:
            return MISS
        self.cache[key] = value
        return value

    def put(self, key, value) -> None:
        if self.cache.pop(key, _ABSENT) is not _ABSENT:
            self.cache[key] = value
            return
        if self.capacity == 0:
            return
        if len(self.cache) >= self.capacity:
            del self.cache[next(iter(self.cache))]
        self.cache[key] = value

    def __len__(self) -> int:
        return len(self.cache)

    def __contains__(self, key) -> bool:
        return key in self.cache
