"""A deliberately plain model of the allocator the README specifies (lists, full prefixes).

The checker replays every call on it: it predicts block tables, ref counts, the free queue
(in eviction order) and the prefix cache, and it knows what every block holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

HashFn = Callable[[Hashable | None, tuple[int, ...]], Hashable]


class Refused(Exception):
    pass


@dataclass
class Seq:
    tokens: list[int]
    table: list[int] = field(default_factory=list)
    computed: int = 0


class Model:
    def __init__(self, num_blocks: int, block_size: int, hash_fn: HashFn) -> None:
        self.num_blocks = num_blocks
        self.bs = block_size
        self.hash_fn = hash_fn
        self.free: list[int] = list(range(num_blocks))  # front = evicted next
        self.ref = [0] * num_blocks
        self.cache: dict[Hashable, int] = {}
        # what each block holds: the whole token prefix up to its end (None = nothing valid)
        self.prefix: list[tuple[int, ...] | None] = [None] * num_blocks
        self.seqs: dict[int, Seq] = {}

    # ------------------------------------------------------------ helpers

    def hashes(self, tokens: list[int] | tuple[int, ...], count: int) -> list[Hashable]:
        out: list[Hashable] = []
        h: Hashable | None = None
        for i in range(count):
            h = self.hash_fn(h, tuple(tokens[i * self.bs : (i + 1) * self.bs]))
            out.append(h)
        return out

    def hits(self, tokens: list[int]) -> list[int]:
        found = []
        count = (len(tokens) - 1) // self.bs  # leave at least one token to compute
        for i, h in enumerate(self.hashes(tokens, count)):
            block = self.cache.get(h)
            if block is None or self.prefix[block] != tuple(tokens[: (i + 1) * self.bs]):
                break
            found.append(block)
        return found

    def needed(self, tokens: list[int]) -> int:
        hits = self.hits(tokens)
        revived = sum(1 for b in hits if self.ref[b] == 0)
        return math.ceil(len(tokens) / self.bs) - len(hits) + revived

    def _take(self) -> int:
        block = self.free.pop(0)
        for h, b in list(self.cache.items()):
            if b == block:
                del self.cache[h]  # evicted
        self.prefix[block] = None
        self.ref[block] = 1
        return block

    # ----------------------------------------------------------- the calls

    def can_allocate(self, tokens: list[int]) -> bool:
        return self.needed(tokens) <= len(self.free)

    def allocate(self, seq_id: int, tokens: list[int]) -> int:
        if self.needed(tokens) > len(self.free):
            raise Refused
        seq = Seq(list(tokens))
        for block in self.hits(tokens):
            if self.ref[block] == 0:
                self.free.remove(block)
            self.ref[block] += 1
            seq.table.append(block)
        seq.computed = len(seq.table) * self.bs
        while len(seq.table) < math.ceil(len(tokens) / self.bs):
            seq.table.append(self._take())
        self.seqs[seq_id] = seq
        return seq.computed

    def append_token(self, seq_id: int, token: int) -> None:
        seq = self.seqs[seq_id]
        if len(seq.tokens) % self.bs == 0:
            if not self.free:
                raise Refused
            seq.table.append(self._take())
        seq.tokens.append(token)

    def mark_computed(self, seq_id: int, num_tokens: int) -> None:
        seq = self.seqs[seq_id]
        num_tokens = min(num_tokens, len(seq.tokens))
        for i, h in enumerate(self.hashes(seq.tokens, num_tokens // self.bs)):
            if i < seq.computed // self.bs:
                continue  # offered once, by the call that completes it (vLLM: num_cached_blocks)
            block = seq.table[i]
            self.prefix[block] = tuple(seq.tokens[: (i + 1) * self.bs])
            if h not in self.cache:
                self.cache[h] = block
        seq.computed = max(seq.computed, num_tokens)

    def free_seq(self, seq_id: int) -> None:
        seq = self.seqs.pop(seq_id)
        for block in reversed(seq.table):
            self.ref[block] -= 1
            if self.ref[block] == 0:
                self.free.append(block)

    # --------------------------------------------------------- knowledge

    def full_and_computed(self, block: int) -> bool:
        return self.prefix[block] is not None

    def expected_hash(self, block: int) -> Hashable:
        prefix = self.prefix[block]
        assert prefix is not None
        return self.hashes(prefix, len(prefix) // self.bs)[-1]
