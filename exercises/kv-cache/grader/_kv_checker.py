"""Drive the user's BlockAllocator and the model side by side; check every invariant after
every call, and fail with a message that names the broken property."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable
from typing import Any

from _kv_model import HashFn, Model, Refused


def default_hash(parent: Hashable | None, tokens: tuple[int, ...]) -> Hashable:
    return hash((parent, tuple(tokens)))


def degenerate_hash(*_: Any) -> int:
    return 0


def parentless_hash(parent: Hashable | None, tokens: tuple[int, ...]) -> Hashable:
    """A hash of a block's own tokens only: equal blocks after different prefixes collide, so
    a hit that checks a block's position and tokens but not its whole prefix is wrong."""
    return hash(tuple(tokens))


class Violation(AssertionError):
    pass


class Checker:
    def __init__(self, module: Any, num_blocks: int, block_size: int, hash_fn: HashFn) -> None:
        self.alloc = module.BlockAllocator(num_blocks, block_size, hash_fn=hash_fn)
        self.collides = hash_fn in (degenerate_hash, parentless_hash)
        self.given: dict[int, tuple[list[int], list[int]]] = {}  # seq -> (list passed, copy)
        self.model = Model(num_blocks, block_size, hash_fn)
        self.bs = block_size
        self.num_blocks = num_blocks
        self.ops = 0
        self.last_cached: dict[Hashable, int] = {}
        self.refused_appends: set[int] = set()  # sequences with a refused append_token
        self.check("BlockAllocator(...)")

    # ------------------------------------------------------------- plumbing

    def fail(self, where: str, message: str) -> None:
        raise Violation(f"after call #{self.ops} {where}: {message}")

    def call(self, where: str, fn: Any, *args: Any, hint: str = "") -> Any:
        self.ops += 1
        try:
            return fn(*args)
        except (NotImplementedError, Violation):
            raise
        except RuntimeError:
            raise
        except Exception as exc:
            self.fail(where, f"raised {type(exc).__name__}: {exc}{hint}")

    def snapshot(self) -> tuple[Any, ...]:
        a = self.alloc
        free = a.num_free_blocks
        return (
            {s: list(a.block_table(s)) for s in self.model.seqs},
            [a.ref_count(b) for b in range(self.num_blocks)],
            list(a.free_blocks()),
            dict(a.cached_blocks()),
            free() if callable(free) else free,
        )

    # ------------------------------------------------------------ the calls

    def allocate(self, seq: int, tokens: list[int]) -> int | None:
        where = f"allocate(seq {seq}, {len(tokens)} tokens)"
        before = self.snapshot()
        can = self.call(f"can_allocate({len(tokens)} tokens)", self.alloc.can_allocate, tokens)
        if self.snapshot() != before:
            self.fail(where, "can_allocate changed the allocator state")
        prefix_before = list(self.model.prefix)
        needed, free_now = self.model.needed(tokens), len(self.model.free)
        try:
            short = (
                f" (it needs {needed} free blocks, counting cached hits that are free, and "
                f"{free_now} are free: raise NoFreeBlocksError before changing anything; rule 6)"
                if needed > free_now
                else ""
            )
            passed = list(tokens)
            cached = self.call(where, self.alloc.allocate, seq, passed, hint=short)
        except NotImplementedError:
            raise
        except RuntimeError as exc:
            if self.snapshot() != before:
                self.fail(where, "a refused allocation changed the allocator (all-or-nothing)")
            if needed <= free_now:
                self.fail(
                    where,
                    f"refused ({exc}) although {free_now} free blocks suffice (it needs {needed})",
                )
            if can:
                self.fail(where, "can_allocate said True but allocate refused")
            return None
        if not can:
            self.fail(
                where,
                "can_allocate said False but allocate succeeded "
                "(cached hits need no new block; rule 6)",
            )
        self.given[seq] = (passed, list(tokens))
        self._check_hits(where, seq, tokens, cached, prefix_before)
        try:
            expected = self.model.allocate(seq, tokens)
        except Refused:
            self.fail(
                where,
                f"succeeded with {free_now} free blocks but it needs {needed} "
                "(count cached blocks that are free as taken)",
            )
        if cached != expected:
            what = "missed a prefix-cache hit" if cached < expected else "too many cached tokens"
            self.fail(
                where,
                f"{what}: returned cached_tokens={cached}, expected {expected} (a prompt "
                "block hits a computed full block with the same tokens after the same prefix, "
                "live or freed: freed blocks stay cached until reused)",
            )
        self.check(where)
        return cached

    def _check_hits(
        self,
        where: str,
        seq: int,
        tokens: list[int],
        cached: Any,
        prefix_before: list[tuple[int, ...] | None],
    ) -> None:
        if not isinstance(cached, int) or cached < 0 or cached % self.bs:
            self.fail(
                where,
                f"returned {cached!r}: cached_tokens must be a multiple of block_size {self.bs}",
            )
        if cached >= len(tokens):
            self.fail(
                where,
                f"returned cached_tokens={cached} for a {len(tokens)}-token prompt: "
                "a fully cached prompt must leave at least one token to compute",
            )
        table = list(self.alloc.block_table(seq))
        for i in range(min(cached // self.bs, len(table))):
            held = prefix_before[table[i]]
            want = tuple(tokens[: (i + 1) * self.bs])
            if held == want:
                continue
            if held is None:
                why = "which holds no computed full block"
            elif held[-self.bs :] == want[-self.bs :]:
                why = "which holds the same tokens after a different prefix " + (
                    "(with this hash_fn hashes collide, so a hit must be verified: "
                    "compare the block's whole prefix, not only its own tokens; rule 4)"
                    if self.collides
                    else "(look blocks up by the chained hash h_i = hash_fn(h_{i-1}, tokens) "
                    "and verify the whole prefix: block i hits only if blocks 0..i-1 match; "
                    "rule 4)"
                )
            else:
                why = "which holds different tokens (a hash match is only a hint: compare tokens)"
            self.fail(where, f"prompt block {i} hit block {table[i]}, {why}")

    def append(self, seq: int, token: int) -> bool:
        where = f"append_token(seq {seq})"
        before = self.snapshot()
        old_table = before[0][seq]
        try:
            self.call(where, self.alloc.append_token, seq, token)
        except NotImplementedError:
            raise
        except RuntimeError:
            if self.snapshot() != before:
                self.fail(where, "a refused append_token changed the allocator")
            if self.model.free or len(self.model.seqs[seq].tokens) % self.bs:
                self.fail(where, "refused although a block was available or not needed")
            self.refused_appends.add(seq)
            return False
        boundary = len(self.model.seqs[seq].tokens) % self.bs == 0
        try:
            self.model.append_token(seq, token)
        except Refused:
            self.fail(where, "succeeded although no block was free and the last one was full")
        table = list(self.alloc.block_table(seq))
        if table[: len(old_table)] != old_table or len(table) != len(old_table) + boundary:
            after_refusal = (
                " (an earlier append_token on it was refused: a refused call must not "
                "record its token)"
                if seq in self.refused_appends
                else ""
            )
            self.fail(
                where,
                f"block table {old_table} -> {table}: decode must take a new block "
                f"exactly when the sequence grows past a block boundary{after_refusal}",
            )
        self.check(where)
        return True

    def computed(self, seq: int, num_tokens: int) -> None:
        where = f"mark_computed(seq {seq}, {num_tokens})"
        self.call(where, self.alloc.mark_computed, seq, num_tokens)
        self.model.mark_computed(seq, num_tokens)
        self.check(where)

    def free(self, seq: int) -> None:
        where = f"free(seq {seq})"
        self.call(where, self.alloc.free, seq)
        self.model.free_seq(seq)
        self.check(where)

    # ------------------------------------------------------------ invariants

    def check(self, where: str) -> None:
        for seq, (passed, copy) in self.given.items():
            if passed != copy:
                self.fail(
                    where,
                    f"the prompt list passed to allocate(seq {seq}) has changed since: the "
                    "allocator kept the caller's list and changed it; store a copy "
                    "(list(tokens)) and never modify an argument",
                )
        tables, refs, free, cached, num_free = self.snapshot()
        m = self.model
        # 1. free and used blocks are disjoint, cover everything, no duplicates
        if len(set(free)) != len(free):
            dup = next(b for b in free if free.count(b) > 1)
            self.fail(where, f"block {dup} is in the free list twice")
        if num_free != len(free):
            self.fail(where, f"num_free_blocks()={num_free} but free_blocks() lists {len(free)}")
        free_set = set(free)
        for b in range(self.num_blocks):
            if b in free_set and refs[b]:
                self.fail(where, f"block {b} is free but has ref_count {refs[b]}")
            if b not in free_set and not refs[b]:
                self.fail(where, f"block {b} leaked: ref_count 0 but not in the free list")
        # 2. ref_count = number of live block-table entries holding the block
        held = Counter(b for t in tables.values() for b in t)
        holders = [held[b] for b in range(self.num_blocks)]
        for b in range(self.num_blocks):
            if refs[b] != holders[b]:
                self.fail(
                    where,
                    f"ref_count({b}) = {refs[b]} but {holders[b]} live block-table entries hold it",
                )
        # 3. ceil(len / block_size) distinct blocks per sequence
        for s, table in tables.items():
            n = len(m.seqs[s].tokens)
            if len(table) != math.ceil(n / self.bs) or len(set(table)) != len(table):
                twice = (
                    "; a block appears twice: take hits first, then new blocks, so that a "
                    "new block never evicts a hit (rule 6)"
                    if len(set(table)) != len(table)
                    else ""
                )
                self.fail(
                    where,
                    f"seq {s} has {n} tokens but block table {table} (need "
                    f"{math.ceil(n / self.bs)} distinct blocks{twice})",
                )
        # 7. eviction removes the old hash entry (checked before 4: a stale entry may point at
        # a block that is now some sequence's partial last block)
        for h, b in cached.items():
            if self.last_cached.get(h) == b and (m.prefix[b] is None or m.expected_hash(b) != h):
                self.fail(
                    where,
                    f"stale hash entry {h!r} -> block {b}: the block was reused "
                    "but its old hash stayed in the prefix cache",
                )
        # 4. the last partial block is private and never hashed
        for s, table in tables.items():
            n = len(m.seqs[s].tokens)
            if n % self.bs and (refs[table[-1]] > 1 or table[-1] in cached.values()):
                self.fail(
                    where,
                    f"block {table[-1]}, the last partial block of seq {s}, is "
                    f"{'shared' if refs[table[-1]] > 1 else 'in the prefix cache'}: only "
                    "full blocks may be hashed or shared",
                )
        self._compare(where, tables, refs, free, cached)
        self.last_cached = cached

    def _compare(self, where: str, tables: dict, refs: list, free: list, cached: dict) -> None:
        m = self.model
        for s, table in tables.items():
            if table != m.seqs[s].table:
                self.fail(
                    where,
                    f"seq {s} block table {table}, the reference gives "
                    f"{m.seqs[s].table} (new blocks come from the front of the free queue)",
                )
        for h, b in cached.items():
            self._check_entry(where, h, b)
        if cached != m.cache:
            self.fail(where, self._cache_diff(where, cached))
        if free != m.free:
            self.fail(
                where,
                f"free blocks in eviction order {free}, the reference gives {m.free}: "
                "free() releases a sequence's blocks last block first and eviction takes "
                "the least recently freed",
            )

    def _check_entry(self, where: str, h: Hashable, b: int) -> None:
        """One prefix-cache entry must map the chained hash of a computed full block to it."""
        m = self.model
        if m.prefix[b] is not None and m.expected_hash(b) == h:
            return
        if self.last_cached.get(h) == b:
            self.fail(
                where,
                f"stale hash entry {h!r} -> block {b}: the block was reused "
                "but its old hash stayed in the prefix cache",
            )
        if m.prefix[b] is None:
            self.fail(
                where,
                f"block {b} entered the prefix cache, but the reference has no computed full "
                "block there: register a block only once mark_computed covers all of its "
                "tokens (rule 3)",
            )
        self.fail(
            where,
            f"block {b} entered the prefix cache under hash {h!r}, but the chained hash of "
            f"the tokens it holds is {m.expected_hash(b)!r}: h_i = hash_fn(h_{{i-1}}, tokens "
            "of block i), over the tokens of successful allocate/append_token calls only",
        )

    def _cache_diff(self, where: str, cached: dict) -> str:
        """One line per differing prefix-cache entry (the first few)."""
        want = self.model.cache
        lines = []
        for h in sorted(set(cached) | set(want), key=repr):
            if cached.get(h) != want.get(h):
                got = "missing" if h not in cached else f"block {cached[h]}"
                exp = "no entry" if h not in want else f"block {want[h]}"
                lines.append(f"hash {_short(h)}: {got}, expected {exp}")
        return (
            "prefix cache differs from the reference: "
            + "; ".join(lines[:3])
            + (f" (and {len(lines) - 3} more)" if len(lines) > 3 else "")
            + _CACHE_RULES.get(where.split("(")[0], _REGISTER)
        )


_REGISTER = (
    " (a full block is registered by the mark_computed call that completes it, however many "
    "calls that took, unless its hash is cached already: the first block registered wins; "
    "rule 3)"
)
_CACHE_RULES = {
    "mark_computed": _REGISTER,
    "free": " (a freed block keeps its hash entry and can still hit until it is reused; rule 5)",
    "allocate": " (only a block taken from the free queue for new data loses its entry; "
    "hits keep theirs; rules 4 and 5)",
    "append_token": " (only a block taken from the free queue for new data loses its entry; "
    "rule 5)",
    "BlockAllocator": " (the prefix cache starts empty)",
}


def _short(h: Hashable) -> str:
    text = repr(h)
    return text if len(text) <= 12 else text[:10] + "..."
