# alternative: per-sequence num_cached_blocks (vLLM v1), OrderedDict free queue, valid-token gather
"""Alt style (vLLM-v1-like bookkeeping): the free queue is an OrderedDict used as an ordered
set (O(1) revive / pop-front / push-back); each sequence tracks num_cached_blocks (how many of
its leading blocks have been offered to the prefix cache) instead of a token watermark, so
chunked prefill with chunks that do not line up with block_size (mark_computed(s, 3),
mark_computed(s, 6), ... with block_size 4) registers block 0 as soon as tokens 0..3 are all
written. Hit verification compares the block's stored parent *hash chain key* built from the
token prefix itself (a tuple-of-chunks key), not the user's hash. Attention: one batched
gather of only the valid tokens (flattened), segment softmax via scatter-free padding."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Hashable

import torch

HashFn = Callable[[Hashable | None, tuple[int, ...]], Hashable]


class NoFreeBlocksError(RuntimeError):
    """Raised when there are not enough free blocks; the allocator must be left unchanged."""


def default_hash(parent, tokens):
    return hash((parent, tokens))


class BlockAllocator:
    def __init__(self, num_blocks, block_size, hash_fn=None):
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.hash_fn = hash_fn or default_hash
        self.fq = OrderedDict((b, None) for b in range(num_blocks))
        self.rc = [0] * num_blocks
        self.h2b = {}
        self.bmeta = {}  # block -> (hash, exact prefix key)
        self.seq = {}  # seq -> dict(tokens, table, ncached, computed)

    def _key(self, toks, i):
        return tuple(toks[: (i + 1) * self.block_size])

    def _hits(self, toks):
        bs, out, h = self.block_size, [], None
        for i in range(max(0, (len(toks) - 1) // bs)):
            h = self.hash_fn(h, tuple(toks[i * bs : (i + 1) * bs]))
            b = self.h2b.get(h)
            if b is None or self.bmeta[b][1] != self._key(toks, i):
                break
            out.append(b)
        return out

    def _cost(self, toks):
        hits = self._hits(toks)
        nnew = math.ceil(len(toks) / self.block_size) - len(hits)
        return hits, nnew, nnew + sum(b in self.fq for b in hits)

    def can_allocate(self, token_ids):
        return self._cost(list(map(int, token_ids)))[2] <= len(self.fq)

    def _fresh(self):
        b, _ = self.fq.popitem(last=False)
        m = self.bmeta.pop(b, None)
        if m:
            del self.h2b[m[0]]
        self.rc[b] = 1
        return b

    def allocate(self, seq_id, token_ids):
        toks = list(map(int, token_ids))
        hits, nnew, need = self._cost(toks)
        if need > len(self.fq):
            raise NoFreeBlocksError("insufficient free blocks")
        for b in hits:
            self.fq.pop(b, None)
            self.rc[b] += 1
        table = hits + [self._fresh() for _ in range(nnew)]
        self.seq[seq_id] = {
            "tokens": toks,
            "table": table,
            "ncached": len(hits),
            "computed": len(hits) * self.block_size,
        }
        return len(hits) * self.block_size

    def append_token(self, seq_id, token_id):
        s = self.seq[seq_id]
        if len(s["tokens"]) % self.block_size == 0:
            if not self.fq:
                raise NoFreeBlocksError("insufficient free blocks")
            s["table"].append(self._fresh())
        s["tokens"].append(int(token_id))

    def mark_computed(self, seq_id, num_tokens):
        s = self.seq[seq_id]
        if num_tokens <= s["computed"]:
            return
        s["computed"] = num_tokens
        toks, bs = s["tokens"], self.block_size
        nfull = min(num_tokens, len(toks)) // bs
        if nfull <= s["ncached"]:
            return
        h = None
        for i in range(nfull):
            h = self.hash_fn(h, tuple(toks[i * bs : (i + 1) * bs]))
            if i < s["ncached"]:
                continue
            b = s["table"][i]
            if h not in self.h2b and b not in self.bmeta:
                self.h2b[h] = b
                self.bmeta[b] = (h, self._key(toks, i))
        s["ncached"] = nfull

    def free(self, seq_id):
        for b in reversed(self.seq.pop(seq_id)["table"]):
            self.rc[b] -= 1
            if self.rc[b] == 0:
                self.fq[b] = None

    def block_table(self, seq_id):
        return list(self.seq[seq_id]["table"])

    def ref_count(self, block_id):
        return self.rc[block_id]

    def num_free_blocks(self):
        return len(self.fq)

    def free_blocks(self):
        return list(self.fq)

    def cached_blocks(self):
        return dict(self.h2b)


def paged_attention_decode(q, k_cache, v_cache, block_tables, seq_lens, scale=None):
    B, H, D = q.shape
    bs, Hkv = k_cache.shape[1], k_cache.shape[2]
    g = H // Hkv
    scale = 1.0 / math.sqrt(D) if scale is None else float(scale)
    dev = q.device
    cd = torch.float64 if q.dtype == torch.float64 else torch.float32
    lens = [int(x) for x in seq_lens.tolist()]
    Lmax = max(lens) if lens else 0
    bt = block_tables.to(dev).long()
    # flattened gather of valid tokens only
    bidx = torch.cat([torch.full((L,), b, dtype=torch.long) for b, L in enumerate(lens)]).to(dev)
    tpos = torch.cat([torch.arange(L) for L in lens]).to(dev)
    blk = bt[bidx, tpos // bs]
    K = k_cache[blk, tpos % bs].to(cd)  # [N, Hkv, D]
    V = v_cache[blk, tpos % bs].to(cd)
    Kp = torch.zeros(B, Lmax, Hkv, D, dtype=cd, device=dev)
    Vp = torch.zeros(B, Lmax, Hkv, D, dtype=cd, device=dev)
    Kp[bidx, tpos] = K
    Vp[bidx, tpos] = V
    valid = torch.arange(Lmax, device=dev)[None, :] < torch.tensor(lens, device=dev)[:, None]
    Kh = Kp.repeat_interleave(g, dim=2)  # [B, Lmax, H, D]
    Vh = Vp.repeat_interleave(g, dim=2)
    s = torch.einsum("bhd,blhd->bhl", q.to(cd), Kh) * scale
    s = s.masked_fill(~valid[:, None, :], float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.einsum("bhl,blhd->bhd", p, Vh).to(q.dtype)
