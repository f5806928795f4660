# mutant: padding is masked by *adding* -1e4 to the scores instead of filling them with -inf, so
# garbage slots whose K is large still get weight. Violates Part 2: "Slots beyond a sequence's
# length hold garbage (large values) that must not reach the result."
"""Alt style: free queue as an intrusive doubly linked list over arrays (O(1) revive),
prefix verification via an interned token trie: every (parent node, block tokens) pair
gets a node id and a registered block remembers its node (no stored prefixes), vectorised batched attention (one gather, masked softmax, GQA by reshaping q)."""
from __future__ import annotations
from collections.abc import Callable, Hashable, Sequence
import math
import torch

HashFn = Callable[[Hashable | None, tuple[int, ...]], Hashable]


class NoFreeBlocksError(RuntimeError):
    """Raised when there are not enough free blocks; the allocator must be left unchanged."""


def default_hash(parent, tokens):
    return hash((parent, tokens))


_NIL = -1


class BlockAllocator:
    def __init__(self, num_blocks, block_size, hash_fn=None):
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.hash_fn = hash_fn or default_hash
        n = num_blocks
        # sentinel node index n
        self.nxt = [i + 1 for i in range(n)] + [0 if n else n]
        self.prv = [n] + [i - 1 for i in range(1, n)] + [n - 1 if n else n]
        if n:
            self.nxt[n - 1] = n
        self.in_q = [True] * n
        self.nfree = n
        self.ref = [0] * n
        self.trie = {}  # (parent node, chunk) -> node id; root node is 0
        # per registered block: (hash, trie node)
        self.meta = {}
        self.cache = {}
        self.seqs = {}  # seq -> [tokens list, table list, computed]

    # --- linked list
    def _unlink(self, b):
        p, q = self.prv[b], self.nxt[b]
        self.nxt[p] = q
        self.prv[q] = p
        self.in_q[b] = False
        self.nfree -= 1

    def _push_back(self, b):
        s = self.num_blocks
        last = self.prv[s]
        self.nxt[last] = b
        self.prv[b] = last
        self.nxt[b] = s
        self.prv[s] = b
        self.in_q[b] = True
        self.nfree += 1

    def _front(self):
        return self.nxt[self.num_blocks]

    def _evict_front(self):
        b = self._front()
        self._unlink(b)
        m = self.meta.pop(b, None)
        if m is not None:
            del self.cache[m[0]]
        self.ref[b] = 1
        return b

    def _lookup(self, toks):
        bs = self.block_size
        hits = []
        h = None
        node = 0
        for i in range(max(0, (len(toks) - 1) // bs)):
            chunk = tuple(toks[i * bs:(i + 1) * bs])
            h = self.hash_fn(h, chunk)
            b = self.cache.get(h)
            node = self.trie.get((node, chunk))
            if b is None or node is None or self.meta[b][1] != node:
                break
            hits.append(b)
        return hits

    def _need(self, toks):
        hits = self._lookup(toks)
        total = (len(toks) + self.block_size - 1) // self.block_size
        return hits, total - len(hits), total - len(hits) + sum(self.in_q[b] for b in hits)

    def can_allocate(self, token_ids):
        return self._need([int(t) for t in token_ids])[2] <= self.nfree

    def allocate(self, seq_id, token_ids):
        toks = [int(t) for t in token_ids]
        hits, nnew, need = self._need(toks)
        if need > self.nfree:
            raise NoFreeBlocksError(f"need {need} blocks, {self.nfree} free")
        for b in hits:
            if self.in_q[b]:
                self._unlink(b)
            self.ref[b] += 1
        table = hits + [self._evict_front() for _ in range(nnew)]
        self.seqs[seq_id] = [toks, table, len(hits) * self.block_size]
        return len(hits) * self.block_size

    def append_token(self, seq_id, token_id):
        toks, table, _ = self.seqs[seq_id]
        if len(toks) % self.block_size == 0:
            if self.nfree == 0:
                raise NoFreeBlocksError("no free block")
            table.append(self._evict_front())
        toks.append(int(token_id))

    def mark_computed(self, seq_id, num_tokens):
        st = self.seqs[seq_id]
        toks, table, done = st
        if num_tokens <= done:
            return
        st[2] = num_tokens
        bs = self.block_size
        lo, hi = done // bs, min(num_tokens, len(toks)) // bs
        h = None
        node = 0
        for i in range(hi):
            chunk = tuple(toks[i * bs:(i + 1) * bs])
            h = self.hash_fn(h, chunk)
            key = (node, chunk)
            if i < lo:
                node = self.trie.get(key)
                if node is None:
                    node = self.trie[key] = len(self.trie) + 1
                continue
            node = self.trie.get(key)
            if node is None:
                node = self.trie[key] = len(self.trie) + 1
            b = table[i]
            if b in self.meta or h in self.cache:
                continue
            self.meta[b] = (h, node)
            self.cache[h] = b

    def free(self, seq_id):
        _, table, _ = self.seqs.pop(seq_id)
        for b in table[::-1]:
            self.ref[b] -= 1
            if not self.ref[b]:
                self._push_back(b)

    def block_table(self, seq_id):
        return list(self.seqs[seq_id][1])

    def ref_count(self, block_id):
        return self.ref[block_id]

    def num_free_blocks(self):
        return self.nfree

    def free_blocks(self):
        out, b = [], self._front()
        while b != self.num_blocks:
            out.append(b)
            b = self.nxt[b]
        return out

    def cached_blocks(self):
        return dict(self.cache)


def paged_attention_decode(q, k_cache, v_cache, block_tables, seq_lens, scale=None):
    B, H, D = q.shape
    nb, bs, Hkv, _ = k_cache.shape
    g = H // Hkv
    if scale is None:
        scale = D ** -0.5
    cd = torch.float64 if q.dtype == torch.float64 else torch.float32
    dev = q.device
    bt = block_tables.to(dev).long()
    lens = seq_lens.to(dev).long()
    T = bt.shape[1] * bs
    t = torch.arange(T, device=dev)
    valid = t[None, :] < lens[:, None]                       # [B, T]
    blk = bt[:, t // bs].clamp(min=0)                        # padding -> 0, masked anyway
    slot = (t % bs)[None, :].expand(B, T)
    K = k_cache[blk, slot].to(cd)                            # [B, T, Hkv, D]
    V = v_cache[blk, slot].to(cd)
    qg = q.to(cd).reshape(B, Hkv, g, D)                       # head h -> kv head h // g
    s = torch.einsum('bkgd,btkd->bkgt', qg, K) * scale
    s = s + (~valid[:, None, None, :]).to(cd) * -1e4
    p = torch.softmax(s, dim=-1)
    o = torch.einsum('bkgt,btkd->bkgd', p, V)
    return o.reshape(B, H, D).to(q.dtype)
