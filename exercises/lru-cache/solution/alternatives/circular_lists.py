# alternative: one circular root and list cells [prev, next, key, value], no node class
"""lru-cache with one circular sentinel and list-cells [prev, next, key, value].

A single root cell whose prev is the most recent and whose next is the least recent entry
(the layout CPython's pure-Python functools code uses). Written iteratively, no node class.
"""

from __future__ import annotations

from typing import Any

PREV, NEXT, KEY, VALUE = 0, 1, 2, 3


class LRUCache:
    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError("capacity must be >= 0")
        self.maxsize = capacity
        self.table: dict = {}
        root: list = []
        root[:] = [root, root, None, None]
        self.root = root

    def _move_to_newest(self, link: list) -> None:
        link_prev, link_next = link[PREV], link[NEXT]
        link_prev[NEXT] = link_next
        link_next[PREV] = link_prev
        root = self.root
        last = root[PREV]
        last[NEXT] = root[PREV] = link
        link[PREV] = last
        link[NEXT] = root

    def get(self, key) -> Any:
        link = self.table.get(key)
        if link is None:
            return -1
        self._move_to_newest(link)
        return link[VALUE]

    def put(self, key, value) -> None:
        link = self.table.get(key)
        if link is not None:
            link[VALUE] = value
            self._move_to_newest(link)
            return
        if self.maxsize == 0:
            return
        root = self.root
        if len(self.table) >= self.maxsize:
            oldest = root[NEXT]
            root[NEXT] = oldest[NEXT]
            oldest[NEXT][PREV] = root
            del self.table[oldest[KEY]]
            oldest[:] = []  # break the cycle for the garbage collector
        last = root[PREV]
        link = [last, root, key, value]
        last[NEXT] = root[PREV] = link
        self.table[key] = link

    def __len__(self) -> int:
        return len(self.table)

    def __contains__(self, key) -> bool:
        return key in self.table
