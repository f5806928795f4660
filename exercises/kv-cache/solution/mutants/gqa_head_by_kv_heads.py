# mutant: query head h reads kv head h // H_kv instead of h // (H // H_kv) (blind solver)
"""Mutant of ok_a_ordereddict.py: w39_gqa_div_by_hkv"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence

import torch

HashFn = Callable[[Hashable | None, tuple[int, ...]], Hashable]


class NoFreeBlocksError(RuntimeError):
    """Raised when there are not enough free blocks; the allocator must be left unchanged."""


def default_hash(parent: Hashable | None, tokens: tuple[int, ...]) -> Hashable:
    return hash((parent, tokens))


class _Seq:
    __slots__ = ("tokens", "table", "computed")

    def __init__(self, tokens, table, computed):
        self.tokens = tokens
        self.table = table
        self.computed = computed


class BlockAllocator:
    def __init__(self, num_blocks: int, block_size: int, hash_fn: HashFn | None = None) -> None:
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.hash_fn = hash_fn or default_hash
        self._ref = [0] * num_blocks
        self._free: OrderedDict[int, None] = OrderedDict((b, None) for b in range(num_blocks))
        self._cache: dict[Hashable, int] = {}
        self._block_hash: dict[int, Hashable] = {}
        self._block_key: dict[int, object] = {}
        self._seqs: dict[int, _Seq] = {}

    # helpers
    def _lookup(self, tokens: list[int]):
        bs = self.block_size
        hits = []
        h = None
        key = None
        for i in range((len(tokens) - 1) // bs):
            blk = tuple(tokens[i * bs:(i + 1) * bs])
            h = self.hash_fn(h, blk)
            key = (key, blk)
            b = self._cache.get(h)
            if b is None or self._block_key.get(b) != key:
                break
            hits.append(b)
        return hits

    def _take_new(self) -> int:
        b, _ = self._free.popitem(last=False)
        h = self._block_hash.pop(b, None)
        if h is not None:
            # only remove if it still points at us
            if self._cache.get(h) == b:
                del self._cache[h]
        self._block_key.pop(b, None)
        return b

    def _need(self, tokens):
        hits = self._lookup(tokens)
        nblocks = -(-len(tokens) // self.block_size)
        free_hits = sum(1 for b in hits if self._ref[b] == 0)
        return hits, (nblocks - len(hits)) + free_hits

    def can_allocate(self, token_ids: Sequence[int]) -> bool:
        tokens = [int(t) for t in token_ids]
        _, need = self._need(tokens)
        return need <= len(self._free)

    def allocate(self, seq_id: int, token_ids: Sequence[int]) -> int:
        tokens = [int(t) for t in token_ids]
        if seq_id in self._seqs:
            raise ValueError(f"sequence {seq_id} already allocated")
        if not tokens:
            raise ValueError("empty prompt")
        hits, need = self._need(tokens)
        if need > len(self._free):
            raise NoFreeBlocksError(f"need {need} blocks, {len(self._free)} free")
        table = []
        for b in hits:
            if self._ref[b] == 0:
                del self._free[b]
            self._ref[b] += 1
            table.append(b)
        nblocks = -(-len(tokens) // self.block_size)
        for _ in range(nblocks - len(hits)):
            b = self._take_new()
            self._ref[b] += 1
            table.append(b)
        self._seqs[seq_id] = _Seq(tokens, table, len(hits) * self.block_size)
        return len(hits) * self.block_size

    def append_token(self, seq_id: int, token_id: int) -> None:
        s = self._seqs[seq_id]
        if len(s.tokens) % self.block_size == 0:
            if not self._free:
                raise NoFreeBlocksError("no free block for append")
            b = self._take_new()
            self._ref[b] += 1
            s.table.append(b)
        s.tokens.append(int(token_id))

    def mark_computed(self, seq_id: int, num_tokens: int) -> None:
        s = self._seqs[seq_id]
        if num_tokens <= s.computed:
            return
        bs = self.block_size
        first = s.computed // bs
        last = num_tokens // bs
        if last > first:
            h = None
            key = None
            for i in range(last):
                blk = tuple(s.tokens[i * bs:(i + 1) * bs])
                h = self.hash_fn(h, blk)
                key = (key, blk)
                if i >= first and h not in self._cache:
                    b = s.table[i]
                    self._cache[h] = b
                    self._block_hash[b] = h
                    self._block_key[b] = key
        s.computed = num_tokens

    def free(self, seq_id: int) -> None:
        s = self._seqs.pop(seq_id)
        for b in reversed(s.table):
            self._ref[b] -= 1
            if self._ref[b] == 0:
                self._free[b] = None

    # ------------------------------------------------------------ introspection

    def block_table(self, seq_id: int) -> list[int]:
        return list(self._seqs[seq_id].table)

    def ref_count(self, block_id: int) -> int:
        return self._ref[block_id]

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
    B, H, D = q.shape
    _, bs, Hkv, _ = k_cache.shape
    if scale is None:
        scale = 1.0 / (D ** 0.5)
    dev = q.device
    seq_lens = seq_lens.to(dev).long()
    bt = block_tables.to(dev).long()
    T = int(seq_lens.max().item())
    t = torch.arange(T, device=dev)
    blk_idx = (t // bs).clamp(max=bt.shape[1] - 1)
    blocks = bt[:, blk_idx]  # [B, T]
    valid = t[None, :] < seq_lens[:, None]
    blocks = torch.where(valid, blocks, torch.zeros_like(blocks))
    slots = (t % bs)[None, :].expand(B, T)
    K = k_cache[blocks, slots].float()  # [B, T, Hkv, D]
    V = v_cache[blocks, slots].float()
    g = H // Hkv
    kv_of_h = torch.arange(H, device=dev) // Hkv
    K = K[:, :, kv_of_h]  # [B, T, H, D]
    V = V[:, :, kv_of_h]
    V = torch.where(valid[:, :, None, None], V, torch.zeros_like(V))
    s = torch.einsum("bhd,bthd->bht", q.float(), K) * scale
    s = s.masked_fill(~valid[:, None, :], float("-inf"))
    p = torch.softmax(s, dim=-1)
    out = torch.einsum("bht,bthd->bhd", p, V)
    return out.to(q.dtype)
