"""lru-cache: a least-recently-used cache with O(1) get and put.

Grade with:  quizzer exercise lru-cache --check
README.md (next to this file) gives the exact rules. Build the recency order yourself:
collections.OrderedDict, functools.lru_cache / functools.cache and cache packages are not
allowed (the grader reads this file and fails if it uses them).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

MISS = -1  # what get() returns for a key that is not cached


class LRUCache:
    """Holds at most ``capacity`` entries. Inserting a new key into a full cache first evicts
    the least recently used entry; get() and put() count as a use, ``in`` does not."""

    def __init__(self, capacity: int) -> None:
        """An empty cache. capacity 0 stores nothing; a negative capacity raises ValueError."""
        # TODO: a dict key -> node, and a doubly linked list of nodes ordered by recency
        # (two sentinel nodes, head and tail, make linking and unlinking branch-free).
        raise NotImplementedError("TODO: LRUCache.__init__")

    def get(self, key: Hashable) -> Any:
        """The value cached for ``key``, or -1 (MISS) if it is not cached.

        A hit makes ``key`` the most recently used entry. O(1).
        """
        raise NotImplementedError("TODO: LRUCache.get")

    def put(self, key: Hashable, value: Any) -> None:
        """Insert ``key`` or replace its value; either way it becomes the most recent entry.

        Replacing never evicts. Inserting into a full cache first evicts the least recently
        used entry. O(1).
        """
        raise NotImplementedError("TODO: LRUCache.put")

    def __len__(self) -> int:
        """How many entries the cache holds (never more than its capacity)."""
        raise NotImplementedError("TODO: LRUCache.__len__")

    def __contains__(self, key: object) -> bool:
        """``key in cache``: a membership test that must NOT change the recency order."""
        raise NotImplementedError("TODO: LRUCache.__contains__")
