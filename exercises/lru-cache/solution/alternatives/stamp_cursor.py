# alternative: two dicts (key -> stamp, stamp -> key) and a cursor over deleted stamps
"""lru-cache, timestamp variant: key -> (stamp, value) and stamp -> key, plus a cursor.

Every use gives the key a fresh, increasing stamp and deletes its old stamp from the
stamp table, so both tables hold exactly the live entries. The least recently used key is
the one with the smallest live stamp; a cursor walks forward over the stamps that have
been deleted. Each stamp is passed by the cursor at most once, so get/put are amortised
O(1) and memory is O(entries).
"""

from __future__ import annotations

from typing import Any

MISS = -1


class LRUCache:
    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError("negative capacity")
        self.capacity = capacity
        self._entry: dict = {}  # key -> [stamp, value]
        self._by_stamp: dict = {}  # stamp -> key
        self._clock = 0
        self._oldest = 0  # no live stamp is smaller than this

    def _restamp(self, key, entry) -> None:
        del self._by_stamp[entry[0]]
        entry[0] = self._clock
        self._by_stamp[self._clock] = key
        self._clock += 1

    def get(self, key) -> Any:
        entry = self._entry.get(key)
        if entry is None:
            return MISS
        self._restamp(key, entry)
        return entry[1]

    def put(self, key, value) -> None:
        entry = self._entry.get(key)
        if entry is not None:
            entry[1] = value
            self._restamp(key, entry)
            return
        if self.capacity == 0:
            return
        if len(self._entry) >= self.capacity:
            while self._oldest not in self._by_stamp:
                self._oldest += 1
            victim = self._by_stamp.pop(self._oldest)
            del self._entry[victim]
        self._entry[key] = [self._clock, value]
        self._by_stamp[self._clock] = key
        self._clock += 1

    def __len__(self) -> int:
        return len(self._entry)

    def __contains__(self, key) -> bool:
        return key in self._entry
