# alternative: one loop step per query head, picking KV head h // g by index
"""Per query head, in a plain Python loop: query head h gathers its KV head h // g by index,
scores use the same offset triangle via a boolean where, and heads are stacked in order."""

from __future__ import annotations

import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int, bias: bool = False) -> None:
        super().__init__()
        if n_kv_heads <= 0 or n_heads <= 0 or d_model % n_heads or n_heads % n_kv_heads:
            raise ValueError("invalid head configuration")
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.head_dim = d_model // n_heads
        self.q_proj = nn.Linear(d_model, n_heads * self.head_dim, bias=bias)
        self.k_proj = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=bias)
        self.v_proj = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=bias)
        self.o_proj = nn.Linear(n_heads * self.head_dim, d_model, bias=bias)

    def forward(self, x, past_kv=None):
        T = x.shape[1]
        hd = self.head_dim
        g = self.n_heads // self.n_kv_heads
        qf = self.q_proj(x)
        k = self.k_proj(x).unflatten(-1, (self.n_kv_heads, hd)).movedim(2, 1)
        v = self.v_proj(x).unflatten(-1, (self.n_kv_heads, hd)).movedim(2, 1)
        if past_kv is not None:
            pk, pv = past_kv
            k = torch.cat([pk, k], dim=-2)
            v = torch.cat([pv, v], dim=-2)
        S = k.size(-2)
        i = torch.arange(T, device=x.device)[:, None]
        j = torch.arange(S, device=x.device)[None, :]
        visible = j - (S - T) <= i
        neg = torch.tensor(float("-inf"), dtype=x.dtype, device=x.device)
        heads = []
        for h in range(self.n_heads):
            qh = qf[..., h * hd : (h + 1) * hd]  # [B, T, d]
            kh = k[:, h // g]  # [B, S, d]
            vh = v[:, h // g]
            sc = qh @ kh.transpose(1, 2) / math.sqrt(hd)
            sc = torch.where(visible, sc, neg)
            heads.append(sc.softmax(-1) @ vh)  # [B, T, d]
        o = torch.cat(heads, dim=-1)
        return self.o_proj(o), (k, v)
