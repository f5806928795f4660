"""Grader for the paged KV block allocator: targeted scenarios, then seeded fuzz against a model.

Every call goes through _kv_checker.Checker, which checks all invariants after it.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from _kv_checker import Checker, default_hash, degenerate_hash, parentless_hash

BS = 4


def tokens(*blocks: int, tail: int = 0) -> list[int]:
    """Full blocks whose every token is the given value, plus ``tail`` extra tokens."""
    out = [v for v in blocks for _ in range(BS)]
    return out + [90 + i for i in range(tail)]


def prefill(c: Checker, seq: int, toks: list[int]) -> int | None:
    cached = c.allocate(seq, toks)
    if cached is not None:
        c.computed(seq, len(toks))
    return cached


def test_interface(solution: Any) -> None:
    cls = getattr(solution, "BlockAllocator", None)
    assert cls is not None, "define class BlockAllocator(num_blocks, block_size, hash_fn=None)"
    for name in (
        "can_allocate",
        "allocate",
        "append_token",
        "mark_computed",
        "free",
        "block_table",
        "ref_count",
        "num_free_blocks",
        "free_blocks",
        "cached_blocks",
    ):
        assert callable(getattr(cls, name, None)) or name == "num_free_blocks", (
            f"BlockAllocator has no method {name}()"
        )


def test_allocate_and_free_everything(solution: Any) -> None:
    c = Checker(solution, 8, BS, default_hash)
    assert c.allocate(1, tokens(1, 2, tail=1)) == 0
    assert c.allocate(2, tokens(3, tail=3)) == 0
    c.free(1)
    c.free(2)


def test_prefix_hit_shares_blocks(solution: Any) -> None:
    c = Checker(solution, 12, BS, default_hash)
    prefill(c, 1, tokens(1, 2, 3, tail=2))
    assert c.allocate(2, tokens(1, 2, 7, tail=1)) == 2 * BS, "sharing 2 computed full blocks"
    assert c.alloc.block_table(2)[:2] == c.alloc.block_table(1)[:2]


def test_hit_needs_computed_kv(solution: Any) -> None:
    c = Checker(solution, 12, BS, default_hash)
    c.allocate(1, tokens(1, 2, tail=1))
    assert c.allocate(2, tokens(1, 2, tail=1)) == 0, "blocks whose KV is not computed must not hit"


def test_only_full_blocks_are_shared(solution: Any) -> None:
    c = Checker(solution, 12, BS, default_hash)
    prefill(c, 1, tokens(1, tail=3))
    c.allocate(2, tokens(1, tail=3))
    c.append(1, 5)
    c.append(2, 6)


def test_hashes_are_chained(solution: Any) -> None:
    c = Checker(solution, 12, BS, default_hash)
    prefill(c, 1, tokens(1, 2, tail=1))
    assert c.allocate(2, tokens(3, 2, tail=1)) == 0, "block 1 may hit only if block 0 matches too"


def test_fully_cached_prompt_leaves_one_token(solution: Any) -> None:
    c = Checker(solution, 12, BS, default_hash)
    prefill(c, 1, tokens(1, 2))
    assert c.allocate(2, tokens(1, 2)) == BS


def test_freed_blocks_hit_until_evicted_lru(solution: Any) -> None:
    c = Checker(solution, 6, BS, default_hash)
    prefill(c, 1, tokens(1, 2, tail=1))  # blocks 0 1 2
    c.free(1)  # freed last block first: queue 3 4 5 2 1 0
    assert c.allocate(2, tokens(1, 2, tail=1)) == 2 * BS, "freed cached blocks must still hit"
    c.free(2)
    prefill(c, 3, tokens(5, 6, 7, 8, tail=1))  # 5 blocks: takes 4 5 2 3 1, evicting 1
    assert c.allocate(4, tokens(1, 2, tail=1)) is None  # block 0 still cached, no room
    c.free(3)
    assert c.allocate(4, tokens(1, 2, tail=1)) == BS, "block 0 survives; block 1 was evicted"


def test_no_stale_hash_after_eviction(solution: Any) -> None:
    c = Checker(solution, 3, BS, default_hash)
    prefill(c, 1, tokens(1, tail=1))
    c.free(1)
    prefill(c, 2, tokens(4, 5, 6))  # reuses every block, including the cached one
    c.free(2)
    assert c.allocate(3, tokens(1, tail=1)) == 0


def test_degenerate_hash_never_false_hit(solution: Any) -> None:
    c = Checker(solution, 16, BS, degenerate_hash)
    prefill(c, 1, tokens(1, 1, 2, tail=1))
    assert c.allocate(2, tokens(2, 1, tail=1)) == 0
    assert c.allocate(3, tokens(1, 1, 1, tail=1)) == BS


def test_hit_needs_the_same_prefix_not_only_the_same_position(solution: Any) -> None:
    """A hash of a block's own tokens: block 1 of [3, 4 | 5, 6] collides with block 1 of
    [1, 2 | 5, 6], at the same position with the same tokens, after another prefix."""
    c = Checker(solution, 16, 2, parentless_hash)
    c.allocate(1, [1, 2, 5, 6, 9])
    c.computed(1, 5)
    c.allocate(2, [3, 4, 9])
    c.computed(2, 3)
    assert c.allocate(3, [3, 4, 5, 6, 7]) == 2, "only block 0 ([3, 4]) is a hit"


def test_refused_allocation_changes_nothing(solution: Any) -> None:
    c = Checker(solution, 5, BS, default_hash)
    prefill(c, 1, tokens(1, 2, tail=1))
    c.free(1)
    prefill(c, 2, tokens(3, tail=1))
    assert c.allocate(3, tokens(1, 2, 4, 5, tail=1)) is None, "needs 5 blocks, 3 are free"
    assert c.allocate(3, tokens(1, 2, tail=1)) == 2 * BS


def test_chunked_prefill_caches_blocks_across_chunks(solution: Any) -> None:
    c = Checker(solution, 8, BS, default_hash)
    prompt = tokens(1, 2, tail=2)  # 10 tokens: blocks 0 and 1 full, block 2 partial
    c.allocate(1, prompt)
    c.computed(1, 3)  # chunks that do not line up with the block size
    c.computed(1, 6)
    assert len(c.alloc.cached_blocks()) == 1, (
        "after mark_computed(3) and mark_computed(6) tokens 0..3 are computed: block 0 must "
        "be cached, however many calls it took (rule 3)"
    )
    c.computed(1, 10)
    c.free(1)
    assert c.allocate(2, prompt) == 2 * BS, "both full blocks of the chunked prefill must hit"


def test_can_allocate_counts_hits(solution: Any) -> None:
    c = Checker(solution, 5, BS, default_hash)
    prefill(c, 1, tokens(1, 2, tail=1))  # 3 blocks used, 2 free
    prompt = tokens(1, 2, 3, tail=1)  # 2 hits (in use) + 2 new blocks: fits
    assert c.alloc.can_allocate(prompt), (
        "can_allocate must count cached hits: this prompt shares 2 live blocks and needs "
        "only 2 of the 2 free ones (rule 6)"
    )
    assert c.allocate(2, prompt) == 2 * BS


def test_refused_append_records_nothing(solution: Any) -> None:
    c = Checker(solution, 3, BS, default_hash)
    c.allocate(1, tokens(1, 2))  # 2 blocks, the last one full
    c.allocate(2, tokens(3))  # the last free block
    assert not c.append(1, 5), "no free block: append_token must refuse"
    c.free(2)
    c.append(1, 5)  # the refused token was not recorded: this one starts a new block
    assert len(c.alloc.block_table(1)) == 3, (
        "a refused append_token must not record its token (rule 6): after it, the sequence "
        "still ends on a full block and the next append takes a new one"
    )


def test_decode_takes_block_at_boundary(solution: Any) -> None:
    c = Checker(solution, 4, BS, default_hash)
    c.allocate(1, tokens(1, tail=2))
    for t in range(2 * BS + 2):
        c.append(1, t)
    assert c.allocate(2, [7]) is None, "every block is taken"
    assert not c.append(1, 9), "no free block for token 17: append_token must refuse"
    c.free(1)


def test_drain_frees_every_block(solution: Any) -> None:
    c = Checker(solution, 10, BS, default_hash)
    for seq in range(4):
        prefill(c, seq, tokens(1, seq, tail=seq % BS))
    for seq in range(4):
        c.free(seq)
    assert c.snapshot()[4] == 10, "draining every sequence must free every block"


# --------------------------------------------------------------------------- fuzz

CONFIGS = [(4, 24), (2, 16), (1, 12), (16, 6)]


def fuzz(solution: Any, seed: int, hash_fn: Any, ops: int = 1500) -> None:
    rng = random.Random(seed)
    block_size, num_blocks = CONFIGS[seed % len(CONFIGS)]
    c = Checker(solution, num_blocks, block_size, hash_fn)
    families = [[rng.randrange(3) for _ in range(rng.randrange(4) * block_size)] for _ in range(4)]
    next_seq = 0
    for _ in range(ops):
        live = list(c.model.seqs)
        roll = rng.random()
        if roll < 0.3 or not live:
            prompt = rng.choice(families) + [
                rng.randrange(3) for _ in range(rng.randrange(1, 2 * block_size + 2))
            ]
            c.allocate(next_seq, prompt)
            next_seq += 1
        elif roll < 0.6:
            c.append(rng.choice(live), rng.randrange(3))
        elif roll < 0.8:
            seq = rng.choice(live)
            c.computed(seq, rng.randrange(len(c.model.seqs[seq].tokens) + 1))
        else:
            c.free(rng.choice(live))
    for seq in list(c.model.seqs):
        c.free(seq)
    assert c.snapshot()[4] == num_blocks, "draining every sequence must free every block"


@pytest.mark.parametrize("seed", range(4))
def test_fuzz_against_reference_model(solution: Any, seed: int) -> None:
    fuzz(solution, seed, default_hash)


@pytest.mark.parametrize("seed", range(2))
def test_fuzz_degenerate_hash(solution: Any, seed: int) -> None:
    fuzz(solution, 100 + seed, degenerate_hash)


@pytest.mark.parametrize("seed", range(2))
def test_fuzz_parentless_hash(solution: Any, seed: int) -> None:
    fuzz(solution, 200 + seed, parentless_hash)


def test_default_hash_fn(solution: Any) -> None:
    alloc = solution.BlockAllocator(8, BS)
    alloc.allocate(1, tokens(1, 2, tail=1))
    alloc.mark_computed(1, 2 * BS + 1)
    assert alloc.allocate(2, tokens(1, 2, tail=3)) == 2 * BS, "hash_fn=None must still cache"
