# mutant: mark_computed only registers blocks from ceil(old/bs) on, so a block that
# was half-covered by an earlier chunk and completed by a later one is never registered.
# Violates README rule 3: "a *full* block whose KV is computed (covered by `mark_computed`) is
# registered under its chained hash" and rule 7 semantics of "the first num_tokens tokens".
from __future__ import annotations
from collections.abc import Callable, Hashable, Sequence
import math
import torch

HashFn = Callable[[Hashable | None, tuple[int, ...]], Hashable]


class NoFreeBlocksError(RuntimeError):
    """Raised when there are not enough free blocks; the allocator must be left unchanged."""


def default_hash(parent, tokens):
    return hash((parent, tokens))


class BlockAllocator:
    def __init__(self, num_blocks: int, block_size: int, hash_fn: HashFn | None = None) -> None:
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.hash_fn = hash_fn or default_hash
        self.refs = [0] * num_blocks
        self.queue = list(range(num_blocks))
        self.cache = {}            # hash -> block
        self.block_hash = {}       # block -> hash (registered blocks only)
        self.block_prefix = {}     # block -> full token prefix through this block
        self.tokens = {}           # seq -> list of tokens
        self.tables = {}           # seq -> list of blocks
        self.computed = {}         # seq -> num computed tokens

    def _hashes(self, toks, nblocks):
        out, h = [], None
        bs = self.block_size
        for i in range(nblocks):
            h = self.hash_fn(h, tuple(toks[i * bs:(i + 1) * bs]))
            out.append(h)
        return out

    def _plan(self, toks):
        bs = self.block_size
        L = len(toks)
        nlook = max(0, (L - 1) // bs)
        hits = []
        for i, h in enumerate(self._hashes(toks, nlook)):
            b = self.cache.get(h)
            if b is None or self.block_prefix.get(b) != tuple(toks[:(i + 1) * bs]):
                break
            hits.append(b)
        nnew = -(-L // bs) - len(hits)
        need = nnew + sum(1 for b in hits if self.refs[b] == 0)
        return hits, nnew, need

    def can_allocate(self, token_ids):
        toks = [int(t) for t in token_ids]
        _, _, need = self._plan(toks)
        return need <= len(self.queue)

    def _take_new(self):
        b = self.queue.pop(0)
        h = self.block_hash.pop(b, None)
        if h is not None:
            del self.cache[h]
            del self.block_prefix[b]
        self.refs[b] = 1
        return b

    def allocate(self, seq_id, token_ids):
        toks = [int(t) for t in token_ids]
        hits, nnew, need = self._plan(toks)
        if need > len(self.queue):
            raise NoFreeBlocksError("not enough free blocks")
        table = []
        for b in hits:
            if self.refs[b] == 0:
                self.queue.remove(b)
            self.refs[b] += 1
            table.append(b)
        for _ in range(nnew):
            table.append(self._take_new())
        self.tokens[seq_id] = toks
        self.tables[seq_id] = table
        self.computed[seq_id] = len(hits) * self.block_size
        return len(hits) * self.block_size

    def append_token(self, seq_id, token_id):
        toks = self.tokens[seq_id]
        if len(toks) % self.block_size == 0:
            if not self.queue:
                raise NoFreeBlocksError("no free block for append")
            self.tables[seq_id].append(self._take_new())
        toks.append(int(token_id))

    def mark_computed(self, seq_id, num_tokens):
        old = self.computed[seq_id]
        if num_tokens <= old:
            return
        toks = self.tokens[seq_id]
        n = min(num_tokens, len(toks))
        self.computed[seq_id] = num_tokens
        bs = self.block_size
        first = -(-old // bs)
        last = n // bs  # blocks [first, last) newly fully computed
        if last <= first:
            return
        hashes = self._hashes(toks, last)
        table = self.tables[seq_id]
        for i in range(first, last):
            h = hashes[i]
            b = table[i]
            if h in self.cache or b in self.block_hash:
                continue
            self.cache[h] = b
            self.block_hash[b] = h
            self.block_prefix[b] = tuple(toks[:(i + 1) * bs])

    def free(self, seq_id):
        table = self.tables.pop(seq_id)
        self.tokens.pop(seq_id)
        self.computed.pop(seq_id)
        for b in reversed(table):
            self.refs[b] -= 1
            if self.refs[b] == 0:
                self.queue.append(b)

    def block_table(self, seq_id):
        return list(self.tables[seq_id])

    def ref_count(self, block_id):
        return self.refs[block_id]

    def num_free_blocks(self):
        return len(self.queue)

    def free_blocks(self):
        return list(self.queue)

    def cached_blocks(self):
        return dict(self.cache)


def paged_attention_decode(q, k_cache, v_cache, block_tables, seq_lens, scale=None):
    B, H, D = q.shape
    _, bs, Hkv, _ = k_cache.shape
    g = H // Hkv
    if scale is None:
        scale = 1.0 / math.sqrt(D)
    out = torch.empty_like(q)
    for b in range(B):
        L = int(seq_lens[b])
        t = torch.arange(L, device=q.device)
        blk = block_tables[b].to(q.device).long()[t // bs]
        slot = t % bs
        K = k_cache[blk, slot]  # [L, Hkv, D]
        V = v_cache[blk, slot]
        K = K.repeat_interleave(g, dim=1).to(torch.float32 if q.dtype != torch.float64 else torch.float64)
        V = V.repeat_interleave(g, dim=1).to(K.dtype)
        qq = q[b].to(K.dtype)
        s = torch.einsum('hd,lhd->hl', qq, K) * scale
        p = torch.softmax(s, dim=-1)
        out[b] = torch.einsum('hl,lhd->hd', p, V).to(q.dtype)
    return out
