# mutant: recency kept in a Python list (least recent first) updated with list.remove / pop(0): correct, but every hit and every eviction is O(n)
"""An LRU cache whose recency order is a plain list: right answers, linear time."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

MISS = -1


class LRUCache:
    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError(f"capacity must be >= 0, got {capacity}")
        self.capacity = capacity
        self._values: dict[Hashable, Any] = {}
        self._order: list[Hashable] = []  # least recently used first

    def get(self, key: Hashable) -> Any:
        if key not in self._values:
            return MISS
        self._order.remove(key)
        self._order.append(key)
        return self._values[key]

    def put(self, key: Hashable, value: Any) -> None:
        if key in self._values:
            self._values[key] = value
            self._order.remove(key)
            self._order.append(key)
            return
        if self.capacity == 0:
            return
        if len(self._values) == self.capacity:
            oldest = self._order.pop(0)
            del self._values[oldest]
        self._values[key] = value
        self._order.append(key)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        return key in self._values
