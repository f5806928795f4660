# mutant: a full cache evicts the most recently used entry (head.next) instead of the least recently used one (tail.prev)
"""Reference: an LRU cache with O(1) get and put (hash map + doubly linked list)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

MISS = -1  # what get() returns for a key that is not cached


class _Node:
    """One cached entry: a link in the recency list; it keeps its key for eviction."""

    __slots__ = ("key", "next", "prev", "value")

    def __init__(self, key: Hashable = None, value: Any = None) -> None:
        self.key = key
        self.value = value
        self.prev: _Node = self
        self.next: _Node = self


class LRUCache:
    """Holds at most ``capacity`` entries; inserting into a full cache evicts the entry that
    was used least recently. ``get`` and ``put`` both count as a use; ``in`` does not.

    The recency list runs from ``_head.next`` (most recent) to ``_tail.prev`` (least
    recent); the two sentinels are never removed, so linking and unlinking need no checks
    for an empty list or an end node.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError(f"capacity must be >= 0, got {capacity}")
        self.capacity = capacity
        self._nodes: dict[Hashable, _Node] = {}
        self._head = _Node()
        self._tail = _Node()
        self._head.next = self._tail
        self._tail.prev = self._head

    def get(self, key: Hashable) -> Any:
        """The value cached for ``key`` (now the most recent entry), or -1 on a miss."""
        node = self._nodes.get(key)
        if node is None:
            return MISS
        self._unlink(node)
        self._push_front(node)
        return node.value

    def put(self, key: Hashable, value: Any) -> None:
        """Insert or update ``key``; it becomes the most recent entry.

        An update never evicts; an insert into a full cache first evicts the least
        recently used entry. A cache of capacity 0 stores nothing.
        """
        node = self._nodes.get(key)
        if node is not None:
            node.value = value
            self._unlink(node)
            self._push_front(node)
            return
        if self.capacity == 0:
            return
        if len(self._nodes) == self.capacity:
            mru = self._head.next
            self._unlink(mru)
            del self._nodes[mru.key]
        node = _Node(key, value)
        self._nodes[key] = node
        self._push_front(node)

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, key: object) -> bool:
        """Membership only: does not change the recency order."""
        return key in self._nodes

    def _unlink(self, node: _Node) -> None:
        node.prev.next = node.next
        node.next.prev = node.prev

    def _push_front(self, node: _Node) -> None:
        first = self._head.next
        node.prev = self._head
        node.next = first
        first.prev = node
        self._head.next = node
