"""Paged KV block allocator with prefix caching, plus a paged-attention decode.

Fill in every method marked TODO; check with `quizzer exercise kv-cache --check`.
README.md (next to this file) gives the exact rules the grader holds you to.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import torch

HashFn = Callable[[Hashable | None, tuple[int, ...]], Hashable]


class NoFreeBlocksError(RuntimeError):
    """Raised when there are not enough free blocks; the allocator must be left unchanged."""


def default_hash(parent: Hashable | None, tokens: tuple[int, ...]) -> Hashable:
    return hash((parent, tokens))


class BlockAllocator:
    def __init__(self, num_blocks: int, block_size: int, hash_fn: HashFn | None = None) -> None:
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.hash_fn = hash_fn or default_hash
        # TODO: per-block ref counts; a free queue in eviction order (initially 0..N-1);
        # the prefix cache {chained hash: block id}; per-sequence tokens and block tables.

    def can_allocate(self, token_ids: Sequence[int]) -> bool:
        """Would allocate() succeed right now? (Must not change anything.)"""
        raise NotImplementedError("TODO: can_allocate")

    def allocate(self, seq_id: int, token_ids: Sequence[int]) -> int:
        """Give a new sequence its blocks; return how many prompt tokens are already cached."""
        raise NotImplementedError("TODO: allocate")

    def append_token(self, seq_id: int, token_id: int) -> None:
        """Decode step: one more token; take a new block only when the last one is full."""
        raise NotImplementedError("TODO: append_token")

    def mark_computed(self, seq_id: int, num_tokens: int) -> None:
        """The KV of the first num_tokens tokens is written: cache the full blocks among them."""
        raise NotImplementedError("TODO: mark_computed")

    def free(self, seq_id: int) -> None:
        """Release the sequence's blocks, last block first; cached ones stay cached."""
        raise NotImplementedError("TODO: free")

    # ------------------------------------------------------------ introspection

    def block_table(self, seq_id: int) -> list[int]:
        raise NotImplementedError("TODO: block_table")

    def ref_count(self, block_id: int) -> int:
        raise NotImplementedError("TODO: ref_count")

    def num_free_blocks(self) -> int:
        raise NotImplementedError("TODO: num_free_blocks")

    def free_blocks(self) -> list[int]:
        """Free block ids in eviction order (the next one reused comes first)."""
        raise NotImplementedError("TODO: free_blocks")

    def cached_blocks(self) -> dict[Hashable, int]:
        """The prefix cache: {chained hash of a full, computed block: block id}."""
        raise NotImplementedError("TODO: cached_blocks")


def paged_attention_decode(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    seq_lens: torch.Tensor,
    scale: float | None = None,
) -> torch.Tensor:
    """One decode step of attention over a paged KV cache.

    q [B, H, D]; k_cache, v_cache [num_blocks, block_size, H_kv, D] (H_kv divides H);
    block_tables [B, max_blocks] int (entries past a sequence's end are padding: -1);
    seq_lens [B]. Returns [B, H, D] = softmax(q K^T * scale) V over each sequence's tokens,
    token t of sequence b living in block block_tables[b, t // block_size], slot t % block_size.
    scale defaults to 1/sqrt(D).
    """
    raise NotImplementedError("TODO: paged_attention_decode")
