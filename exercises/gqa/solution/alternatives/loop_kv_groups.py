# alternative: one loop step per KV head serving its block of query heads, cache by slice assignment
"""Loops over the KV heads: each KV head serves its block of consecutive query heads, with an
additive mask tensor built from the offset lower triangle; the cache is written into a
freshly allocated buffer by slice assignment instead of concatenation."""

from __future__ import annotations

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int, bias: bool = False) -> None:
        super().__init__()
        if n_kv_heads < 1 or n_heads < n_kv_heads:
            raise ValueError("n_kv_heads must be between 1 and n_heads")
        if d_model % n_heads != 0:
            raise ValueError("d_model must be divisible by n_heads")
        if n_heads % n_kv_heads != 0:
            raise ValueError("n_heads must be divisible by n_kv_heads")
        self.h = n_heads
        self.kvh = n_kv_heads
        self.hd = d_model // n_heads
        self.g = n_heads // n_kv_heads
        self.q_proj = nn.Linear(d_model, n_heads * self.hd, bias=bias)
        self.k_proj = nn.Linear(d_model, n_kv_heads * self.hd, bias=bias)
        self.v_proj = nn.Linear(d_model, n_kv_heads * self.hd, bias=bias)
        self.o_proj = nn.Linear(n_heads * self.hd, d_model, bias=bias)

    def _heads(self, y, n):
        b, t, _ = y.shape
        return y.reshape(b, t, n, self.hd).permute(0, 2, 1, 3)

    def forward(self, x, past_kv=None):
        b, t, _ = x.shape
        q = self._heads(self.q_proj(x), self.h)
        k_new = self._heads(self.k_proj(x), self.kvh)
        v_new = self._heads(self.v_proj(x), self.kvh)
        t_past = 0 if past_kv is None else past_kv[0].shape[2]
        s = t_past + t
        keys = k_new.new_zeros(b, self.kvh, s, self.hd)
        values = v_new.new_zeros(b, self.kvh, s, self.hd)
        if t_past:
            keys[:, :, :t_past] = past_kv[0]
            values[:, :, :t_past] = past_kv[1]
        keys[:, :, t_past:] = k_new
        values[:, :, t_past:] = v_new

        allowed = torch.ones(t, s, dtype=torch.bool, device=x.device).tril(diagonal=t_past)
        bias = torch.zeros(t, s, dtype=q.dtype, device=x.device)
        bias = bias.masked_fill(~allowed, float("-inf"))
        scale = self.hd**-0.5

        outs = []
        for j in range(self.kvh):
            qj = q[:, j * self.g : (j + 1) * self.g]  # [B, g, T, d]
            kj = keys[:, j : j + 1]  # [B, 1, S, d]
            vj = values[:, j : j + 1]
            sc = torch.matmul(qj, kj.transpose(-1, -2)) * scale + bias
            outs.append(torch.matmul(torch.softmax(sc, dim=-1), vj))
        o = torch.cat(outs, dim=1)  # [B, n_heads, T, d]
        o = o.transpose(1, 2).reshape(b, t, self.h * self.hd)
        return self.o_proj(o), (keys, values)
