# alternative: free queue by timestamps, a trie of cached blocks, flat gathers (blind solver)
"""Correct, different style: the free queue is a dict block -> insertion stamp (front = the
smallest stamp), the hit check compares an interned prefix-node id (a content-addressed trie
of (parent node, tokens) -> int) instead of nested tuples, a small object per block.
Attention: flatten the cache to [num_blocks*block_size, H_kv, D], flat index
block*block_size + slot, grouped matmul via q.view(B, H_kv, g, D)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Sequence

import torch

HashFn = Callable[[Hashable | None, tuple[int, ...]], Hashable]


class NoFreeBlocksError(RuntimeError):
    """Raised when there are not enough free blocks; the allocator must be left unchanged."""


def default_hash(parent: Hashable | None, tokens: tuple[int, ...]) -> Hashable:
    return hash((parent, tokens))


class _Block:
    __slots__ = ("hash", "id", "node", "ref")

    def __init__(self, i):
        self.id = i
        self.ref = 0
        self.hash = None  # set while registered in the prefix cache
        self.node = None  # interned id of the prefix it holds


_UNSET = object()


class BlockAllocator:
    def __init__(self, num_blocks: int, block_size: int, hash_fn: HashFn | None = None) -> None:
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.hash_fn = hash_fn or default_hash
        self._blocks = [_Block(i) for i in range(num_blocks)]
        self._clock = itertools.count()
        self._stamp = {i: next(self._clock) for i in range(num_blocks)}
        self._cache = {}
        self._seqs = {}  # seq -> [tokens, table, computed]
        self._trie = {}  # (parent node id or -1, tokens) -> node id; content-addressed

    def _node(self, parent, t, create):
        key = (parent, t)
        n = self._trie.get(key)
        if n is None and create:
            n = self._trie[key] = len(self._trie)
        return n

    def _chunks(self, tokens, n):
        bs = self.block_size
        h = None
        for i in range(n):
            t = tuple(tokens[i * bs : (i + 1) * bs])
            h = self.hash_fn(h, t)
            yield i, t, h

    def _hits(self, tokens):
        hits = []
        node = -1
        for _i, t, h in self._chunks(tokens, (len(tokens) - 1) // self.block_size):
            blk = self._cache.get(h, _UNSET)
            if blk is _UNSET:
                break
            node = self._node(node, t, create=False)
            if node is None or blk.node != node:
                break
            hits.append(blk)
        return hits

    def _demand(self, tokens):
        hits = self._hits(tokens)
        nb = (len(tokens) + self.block_size - 1) // self.block_size
        return hits, nb - len(hits) + sum(b.ref == 0 for b in hits)

    def _evict_front(self):
        bid = min(self._stamp, key=self._stamp.__getitem__)
        del self._stamp[bid]
        blk = self._blocks[bid]
        if blk.hash is not None:
            del self._cache[blk.hash]
            blk.hash = blk.node = None
        return blk

    def can_allocate(self, token_ids: Sequence[int]) -> bool:
        _, need = self._demand([int(x) for x in token_ids])
        return len(self._stamp) >= need

    def allocate(self, seq_id: int, token_ids: Sequence[int]) -> int:
        tokens = [int(x) for x in token_ids]
        hits, need = self._demand(tokens)
        if len(self._stamp) < need:
            raise NoFreeBlocksError(f"{need} blocks needed, {len(self._stamp)} free")
        table = []
        for blk in hits:
            if blk.ref == 0:
                self._stamp.pop(blk.id)
            blk.ref += 1
            table.append(blk)
        nb = (len(tokens) + self.block_size - 1) // self.block_size
        while len(table) < nb:
            blk = self._evict_front()
            blk.ref += 1
            table.append(blk)
        done = len(hits) * self.block_size
        self._seqs[seq_id] = [tokens, table, done]
        return done

    def append_token(self, seq_id: int, token_id: int) -> None:
        tokens, table, _ = self._seqs[seq_id]
        if len(tokens) % self.block_size == 0:
            if not self._stamp:
                raise NoFreeBlocksError("no free block")
            blk = self._evict_front()
            blk.ref += 1
            table.append(blk)
        tokens.append(int(token_id))

    def mark_computed(self, seq_id: int, num_tokens: int) -> None:
        rec = self._seqs[seq_id]
        tokens, table, old = rec
        if num_tokens <= old:
            return
        lo = old // self.block_size
        node = -1
        for i, t, h in self._chunks(tokens, num_tokens // self.block_size):
            node = self._node(node, t, create=True)
            if i < lo or h in self._cache:
                continue
            blk = table[i]
            blk.hash, blk.node = h, node
            self._cache[h] = blk
        rec[2] = num_tokens

    def free(self, seq_id: int) -> None:
        _, table, _ = self._seqs.pop(seq_id)
        for blk in table[::-1]:
            blk.ref -= 1
            if blk.ref == 0:
                self._stamp[blk.id] = next(self._clock)

    # ------------------------------------------------------------ introspection

    def block_table(self, seq_id: int) -> list[int]:
        return [blk.id for blk in self._seqs[seq_id][1]]

    def ref_count(self, block_id: int) -> int:
        return self._blocks[block_id].ref

    def num_free_blocks(self) -> int:
        return len(self._stamp)

    def free_blocks(self) -> list[int]:
        return sorted(self._stamp, key=self._stamp.__getitem__)

    def cached_blocks(self) -> dict[Hashable, int]:
        return {h: blk.id for h, blk in self._cache.items()}


def paged_attention_decode(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    seq_lens: torch.Tensor,
    scale: float | None = None,
) -> torch.Tensor:
    B, H, D = q.shape
    nblocks, bs, Hkv, _ = k_cache.shape
    g = H // Hkv
    if scale is None:
        scale = D**-0.5
    dev = q.device
    lens = seq_lens.to(device=dev, dtype=torch.long)
    T = block_tables.shape[1] * bs
    pos = torch.arange(T, device=dev)
    bt = block_tables.to(device=dev, dtype=torch.long)
    blk = bt.repeat_interleave(bs, dim=1)  # [B, T]
    flat = blk * bs + (pos % bs)[None]
    keep = pos[None] < lens[:, None]  # [B, T]
    flat = torch.where(keep, flat, 0)
    kf = k_cache.reshape(nblocks * bs, Hkv, D)
    vf = v_cache.reshape(nblocks * bs, Hkv, D)
    K = kf[flat].float().permute(0, 2, 1, 3)  # [B, Hkv, T, D]
    V = vf[flat].float().permute(0, 2, 1, 3)
    V = V * keep[:, None, :, None]
    qg = q.float().reshape(B, Hkv, g, D)
    S = torch.matmul(qg, K.transpose(-1, -2)) * scale  # [B, Hkv, g, T]
    S = torch.where(keep[:, None, None, :], S, torch.tensor(float("-inf"), device=dev))
    P = torch.softmax(S, dim=-1)
    out = torch.matmul(P, V)  # [B, Hkv, g, D]
    return out.reshape(B, H, D).to(q.dtype)
