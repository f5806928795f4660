# alternative: lazy-deletion heap free queue, recursive lookup, block-by-block online softmax
"""Alt style: free queue is a lazy-deletion min-heap keyed by a "freed at" clock (no list
removal), recursive prefix lookup, can_allocate/allocate share a pure planning function;
attention is computed per sequence block by block with an online (streaming) softmax,
flash-decoding style, never materialising the padded K/V."""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Hashable

import torch

HashFn = Callable[[Hashable | None, tuple[int, ...]], Hashable]


class NoFreeBlocksError(RuntimeError):
    """Raised when there are not enough free blocks; the allocator must be left unchanged."""


def default_hash(parent, tokens):
    return hash((parent, tokens))


class _Seq:
    __slots__ = ("done", "table", "toks")

    def __init__(self, toks, table, done):
        self.toks, self.table, self.done = toks, table, done


class BlockAllocator:
    def __init__(self, num_blocks, block_size, hash_fn=None):
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.hash_fn = hash_fn or default_hash
        self._clock = num_blocks
        self._stamp = {b: b for b in range(num_blocks)}  # free block -> time it was freed
        self._heap = [(b, b) for b in range(num_blocks)]
        self._rc = {}  # used block -> ref count
        self._h2b = {}
        self._b2key = {}  # block -> (hash, prefix tokens)
        self._seqs: dict[int, _Seq] = {}

    # ---- free queue
    def _pop_front(self):
        while True:
            t, b = heapq.heappop(self._heap)
            if self._stamp.get(b) == t:
                del self._stamp[b]
                return b

    def _push_back(self, b):
        self._stamp[b] = self._clock
        heapq.heappush(self._heap, (self._clock, b))
        self._clock += 1
        if len(self._heap) > 4 * (self.num_blocks + 8):  # compact stale heap entries
            self._heap = [(t, x) for x, t in self._stamp.items()]
            heapq.heapify(self._heap)

    # ---- planning
    def _match(self, toks, i, parent, limit):
        """Recursive longest cached prefix starting at block i."""
        if i >= limit:
            return []
        bs = self.block_size
        chunk = tuple(toks[i * bs : (i + 1) * bs])
        h = self.hash_fn(parent, chunk)
        b = self._h2b.get(h)
        if b is None or self._b2key[b][1] != tuple(toks[: (i + 1) * bs]):
            return []
        return [b, *self._match(toks, i + 1, h, limit)]

    def _plan(self, toks):
        limit = max(0, (len(toks) - 1) // self.block_size)
        hits = []
        # iterative driver over the recursion in slices to keep the stack shallow
        i, parent = 0, None
        while i < limit:
            step = min(limit, i + 200)
            part = self._match(toks, i, parent, step)
            hits += part
            if len(part) < step - i:
                break
            i = step
            parent = self._b2key[hits[-1]][0]
        total = -(-len(toks) // self.block_size)
        need = total - len(hits) + sum(1 for b in hits if b in self._stamp)
        return hits, total - len(hits), need

    def can_allocate(self, token_ids):
        return self._plan([int(x) for x in token_ids])[2] <= len(self._stamp)

    def _new_block(self):
        b = self._pop_front()
        key = self._b2key.pop(b, None)
        if key is not None:
            self._h2b.pop(key[0])
        self._rc[b] = 1
        return b

    def allocate(self, seq_id, token_ids):
        toks = [int(x) for x in token_ids]
        hits, nnew, need = self._plan(toks)
        if need > len(self._stamp):
            raise NoFreeBlocksError("out of KV blocks")
        for b in hits:
            if b in self._stamp:
                del self._stamp[b]  # lazy: heap entry becomes stale
                self._rc[b] = 1
            else:
                self._rc[b] += 1
        table = list(hits)
        for _ in range(nnew):
            table.append(self._new_block())
        self._seqs[seq_id] = _Seq(toks, table, len(hits) * self.block_size)
        return len(hits) * self.block_size

    def append_token(self, seq_id, token_id):
        s = self._seqs[seq_id]
        if len(s.toks) % self.block_size == 0:
            if not self._stamp:
                raise NoFreeBlocksError("out of KV blocks")
            s.table.append(self._new_block())
        s.toks.append(int(token_id))

    def mark_computed(self, seq_id, num_tokens):
        s = self._seqs[seq_id]
        if num_tokens <= s.done:
            return
        bs = self.block_size
        start = s.done // bs
        s.done = num_tokens
        stop = min(num_tokens, len(s.toks)) // bs
        h = None
        for i in range(stop):
            h = self.hash_fn(h, tuple(s.toks[i * bs : (i + 1) * bs]))
            if i >= start:
                b = s.table[i]
                if h not in self._h2b and b not in self._b2key:
                    self._h2b[h] = b
                    self._b2key[b] = (h, tuple(s.toks[: (i + 1) * bs]))

    def free(self, seq_id):
        s = self._seqs.pop(seq_id)
        i = len(s.table) - 1
        while i >= 0:
            b = s.table[i]
            self._rc[b] -= 1
            if self._rc[b] == 0:
                del self._rc[b]
                self._push_back(b)
            i -= 1

    def block_table(self, seq_id):
        return list(self._seqs[seq_id].table)

    def ref_count(self, block_id):
        return self._rc.get(block_id, 0)

    def num_free_blocks(self):
        return len(self._stamp)

    def free_blocks(self):
        return [b for b, _ in sorted(self._stamp.items(), key=lambda kv: kv[1])]

    def cached_blocks(self):
        return dict(self._h2b)


def paged_attention_decode(q, k_cache, v_cache, block_tables, seq_lens, scale=None):
    B, H, D = q.shape
    bs, Hkv = k_cache.shape[1], k_cache.shape[2]
    g = H // Hkv
    scale = (1.0 / math.sqrt(D)) if scale is None else scale
    acc_t = torch.float64 if q.dtype == torch.float64 else torch.float32
    kv_of_head = torch.arange(H, device=q.device) // g
    out = torch.empty_like(q)
    bt = block_tables.tolist()
    for b in range(B):
        L = int(seq_lens[b])
        qb = q[b].to(acc_t) * scale  # [H, D]
        m = torch.full((H,), float("-inf"), dtype=acc_t, device=q.device)
        denom = torch.zeros(H, dtype=acc_t, device=q.device)
        acc = torch.zeros(H, D, dtype=acc_t, device=q.device)
        for j in range((L + bs - 1) // bs):
            n = min(bs, L - j * bs)
            blk = bt[b][j]
            K = k_cache[blk, :n].to(acc_t)[:, kv_of_head]  # [n, H, D]
            V = v_cache[blk, :n].to(acc_t)[:, kv_of_head]
            s = torch.einsum("hd,nhd->hn", qb, K)
            m_new = torch.maximum(m, s.max(dim=1).values)
            corr = torch.exp(m - m_new)
            p = torch.exp(s - m_new[:, None])
            denom = denom * corr + p.sum(dim=1)
            acc = acc * corr[:, None] + torch.einsum("hn,nhd->hd", p, V)
            m = m_new
        out[b] = (acc / denom[:, None]).to(q.dtype)
    return out
