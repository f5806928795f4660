# alternative: a singly linked list whose dict maps each key to the node before it
"""lru-cache, singly linked variant: the dict maps each key to the node BEFORE it.

Oldest entry right after the head sentinel, newest at the tail. With the predecessor in
hand, unlinking a node from a singly linked list is O(1); only the successor's dict entry
has to be repointed.
"""

from __future__ import annotations

from typing import Any

MISS = -1


class _Node:
    __slots__ = ("key", "next", "value")

    def __init__(self, key=None, value=None):
        self.key = key
        self.value = value
        self.next = None


class LRUCache:
    def __init__(self, capacity: int) -> None:
        if not isinstance(capacity, int) or capacity < 0:
            raise ValueError("capacity must be an int >= 0")
        self._cap = capacity
        self._head = _Node()
        self._tail = self._head
        self._pred: dict = {}  # key -> predecessor node

    def _detach(self, pred: _Node) -> _Node:
        node = pred.next
        nxt = node.next
        pred.next = nxt
        if nxt is None:
            self._tail = pred
        else:
            self._pred[nxt.key] = pred
        node.next = None
        return node

    def _append(self, node: _Node) -> None:
        self._pred[node.key] = self._tail
        self._tail.next = node
        self._tail = node

    def _touch(self, key) -> _Node:
        pred = self._pred[key]
        node = pred.next
        if node is not self._tail:
            self._detach(pred)
            self._append(node)
        return node

    def get(self, key) -> Any:
        if key not in self._pred:
            return MISS
        return self._touch(key).value

    def put(self, key, value) -> None:
        if key in self._pred:
            self._touch(key).value = value
            return
        if self._cap == 0:
            return
        if len(self._pred) == self._cap:
            old = self._detach(self._head)
            del self._pred[old.key]
        self._append(_Node(key, value))

    def __len__(self) -> int:
        return len(self._pred)

    def __contains__(self, key) -> bool:
        return key in self._pred
