# alternative: dataclass nodes and one threading.Lock taken by a functools.wraps decorator
"""lru-cache, thread-safe: dataclass nodes, one lock taken by a decorator (functools.wraps).

The interview follow-up done in place: every public method runs under one threading.Lock,
because get() also writes the list. functools is imported for `wraps` only -- no
functools.lru_cache / functools.cache and no OrderedDict anywhere.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import Any


def _locked(method):
    @functools.wraps(method)
    def wrapper(self, *args):
        with self._lock:
            return method(self, *args)

    return wrapper


@dataclass(eq=False)
class Node:
    key: Any = None
    value: Any = None
    prev: Node | None = None
    next: Node | None = None


class LRUCache:
    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError(f"capacity must be >= 0 (got {capacity})")
        self.capacity = capacity
        self._lock = threading.Lock()
        self._nodes: dict = {}
        self._lru = Node()  # sentinel on the least-recent side
        self._mru = Node()  # sentinel on the most-recent side
        self._lru.next = self._mru
        self._mru.prev = self._lru

    def _remove(self, node: Node) -> None:
        node.prev.next = node.next
        node.next.prev = node.prev

    def _add_mru(self, node: Node) -> None:
        last = self._mru.prev
        last.next = node
        node.prev = last
        node.next = self._mru
        self._mru.prev = node

    @_locked
    def get(self, key) -> Any:
        node = self._nodes.get(key)
        if node is None:
            return -1
        self._remove(node)
        self._add_mru(node)
        return node.value

    @_locked
    def put(self, key, value) -> None:
        node = self._nodes.get(key)
        if node is not None:
            node.value = value
            self._remove(node)
            self._add_mru(node)
            return
        if self.capacity == 0:
            return
        if len(self._nodes) == self.capacity:
            victim = self._lru.next
            self._remove(victim)
            del self._nodes[victim.key]
        node = Node(key, value)
        self._nodes[key] = node
        self._add_mru(node)

    @_locked
    def __len__(self) -> int:
        return len(self._nodes)

    @_locked
    def __contains__(self, key) -> bool:
        return key in self._nodes
