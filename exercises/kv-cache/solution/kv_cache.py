"""Reference: paged KV block allocator with prefix caching, and a paged-attention decode."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence

import torch

HashFn = Callable[[Hashable | None, tuple[int, ...]], Hashable]


class NoFreeBlocksError(RuntimeError):
    """Not enough free blocks; the allocator is left exactly as it was."""


def default_hash(parent: Hashable | None, tokens: tuple[int, ...]) -> Hashable:
    return hash((parent, tokens))


# The exact identity of a full block's contents: (key of the previous block, its tokens).
# Nested tuples share their parents, so this costs one tuple per block.
Key = tuple | None


class _Block:
    __slots__ = ("block_id", "hash", "key", "ref_count")

    def __init__(self, block_id: int) -> None:
        self.block_id = block_id
        self.ref_count = 0
        self.hash: Hashable | None = None  # set while the block is in the prefix cache
        self.key: Key = None  # what it holds, to verify a hash hit (hashes collide)


class _Seq:
    __slots__ = ("computed", "table", "tokens")

    def __init__(self, tokens: list[int]) -> None:
        self.tokens = tokens
        self.table: list[int] = []
        self.computed = 0


class BlockAllocator:
    def __init__(self, num_blocks: int, block_size: int, hash_fn: HashFn | None = None) -> None:
        if num_blocks <= 0 or block_size <= 0:
            raise ValueError("num_blocks and block_size must be positive")
        self.block_size = block_size
        self.hash_fn = hash_fn or default_hash
        self.blocks = [_Block(i) for i in range(num_blocks)]
        self._free: OrderedDict[int, None] = OrderedDict.fromkeys(range(num_blocks))
        self._cache: dict[Hashable, int] = {}
        self._seqs: dict[int, _Seq] = {}

    # ------------------------------------------------------------ prefix cache

    def _chain(self, token_ids: Sequence[int], num_blocks: int):  # type: ignore[no-untyped-def]
        """Yield (index, hash, key) of the first ``num_blocks`` full blocks of a prompt."""
        h: Hashable | None = None
        key: Key = None
        bs = self.block_size
        for i in range(num_blocks):
            tokens = tuple(token_ids[i * bs : (i + 1) * bs])
            h = self.hash_fn(h, tokens)
            key = (key, tokens)
            yield i, h, key

    def _cache_hits(self, token_ids: Sequence[int]) -> list[int]:
        """Cached blocks of the longest computed prefix, leaving >= 1 token to compute."""
        hits: list[int] = []
        for _, h, key in self._chain(token_ids, (len(token_ids) - 1) // self.block_size):
            block_id = self._cache.get(h)
            # a hash match is only a hint: the block must hold these tokens after this prefix
            if block_id is None or self.blocks[block_id].key != key:
                break
            hits.append(block_id)
        return hits

    def _take_free_block(self) -> int:
        block_id, _ = self._free.popitem(last=False)  # least recently freed first
        block = self.blocks[block_id]
        if block.hash is not None:  # evict: its old contents can no longer hit
            del self._cache[block.hash]
            block.hash, block.key = None, None
        block.ref_count = 1
        return block_id

    # -------------------------------------------------------------- interface

    def _blocks_needed(self, token_ids: Sequence[int]) -> tuple[list[int], int]:
        hits = self._cache_hits(token_ids)
        revived = sum(1 for b in hits if self.blocks[b].ref_count == 0)
        fresh = math.ceil(len(token_ids) / self.block_size) - len(hits)
        return hits, fresh + revived

    def can_allocate(self, token_ids: Sequence[int]) -> bool:
        return self._blocks_needed(token_ids)[1] <= len(self._free)

    def allocate(self, seq_id: int, token_ids: Sequence[int]) -> int:
        if seq_id in self._seqs:
            raise ValueError(f"sequence {seq_id} already has blocks")
        if not token_ids:
            raise ValueError("cannot allocate an empty prompt")
        hits, needed = self._blocks_needed(token_ids)
        if needed > len(self._free):
            raise NoFreeBlocksError(f"need {needed} free blocks, have {len(self._free)}")
        seq = _Seq(list(token_ids))
        for block_id in hits:
            block = self.blocks[block_id]
            if block.ref_count == 0:
                del self._free[block_id]
            block.ref_count += 1
            seq.table.append(block_id)
        while len(seq.table) < math.ceil(len(token_ids) / self.block_size):
            seq.table.append(self._take_free_block())
        seq.computed = len(hits) * self.block_size
        self._seqs[seq_id] = seq
        return seq.computed

    def append_token(self, seq_id: int, token_id: int) -> None:
        seq = self._seqs[seq_id]
        if len(seq.tokens) % self.block_size == 0:  # the last block is full
            if not self._free:
                raise NoFreeBlocksError("no free block for the next token")
            seq.table.append(self._take_free_block())
        seq.tokens.append(token_id)

    def mark_computed(self, seq_id: int, num_tokens: int) -> None:
        """The KV of the first ``num_tokens`` tokens is written: cache its full blocks."""
        seq = self._seqs[seq_id]
        num_tokens = min(num_tokens, len(seq.tokens))
        done = seq.computed // self.block_size  # full blocks offered to the cache already
        for i, h, key in self._chain(seq.tokens, num_tokens // self.block_size):
            if i < done or h in self._cache:
                continue  # already offered (hit or registered), or another block won the hash
            block = self.blocks[seq.table[i]]
            block.hash, block.key = h, key
            self._cache[h] = block.block_id
        seq.computed = max(seq.computed, num_tokens)

    def free(self, seq_id: int) -> None:
        seq = self._seqs.pop(seq_id)
        for block_id in reversed(seq.table):  # tail first: it is evicted before the prefix
            block = self.blocks[block_id]
            block.ref_count -= 1
            if block.ref_count == 0:
                self._free[block_id] = None

    # ---------------------------------------------------------- introspection

    def block_table(self, seq_id: int) -> list[int]:
        return list(self._seqs[seq_id].table)

    def ref_count(self, block_id: int) -> int:
        return self.blocks[block_id].ref_count

    def num_free_blocks(self) -> int:
        return len(self._free)

    def free_blocks(self) -> list[int]:
        return list(self._free)

    def cached_blocks(self) -> dict[Hashable, int]:
        return dict(self._cache)


def paged_attention_decode(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    seq_lens: torch.Tensor,
    scale: float | None = None,
) -> torch.Tensor:
    """One decode step: q [B, H, D]; caches [num_blocks, block_size, H_kv, D];
    block_tables [B, max_blocks] (padding entries are never read); seq_lens [B]."""
    _, heads, dim = q.shape
    block_size, kv_heads = k_cache.shape[1], k_cache.shape[2]
    scale = dim**-0.5 if scale is None else scale
    max_len = int(seq_lens.max())
    positions = torch.arange(max_len, device=q.device)
    valid = positions[None, :] < seq_lens.to(q.device)[:, None]  # [B, T]
    blocks = block_tables.to(q.device).long()[:, positions // block_size]  # [B, T]
    blocks = torch.where(valid, blocks, torch.zeros_like(blocks))  # never index padding
    k = k_cache[blocks, positions % block_size]  # [B, T, H_kv, D]
    v = v_cache[blocks, positions % block_size]
    group = heads // kv_heads
    k = k.repeat_interleave(group, dim=2).float()  # GQA: H_kv -> H
    v = v.repeat_interleave(group, dim=2).float()
    scores = torch.einsum("bhd,bthd->bht", q.float(), k) * scale
    scores = scores.masked_fill(~valid[:, None, :], float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    return torch.einsum("bht,bthd->bhd", probs, v).to(q.dtype)
