# alternative: all heads at once with einsum over a grouped query view, K/V never expanded
"""All heads at once with einsum over a grouped query view [B, n_kv, g, T, d]; K/V broadcast
without copies and the causal mask comes from comparing position indices."""

from __future__ import annotations

import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int, bias: bool = False) -> None:
        super().__init__()
        if n_heads <= 0 or n_kv_heads <= 0 or d_model % n_heads or n_heads % n_kv_heads:
            raise ValueError("bad head counts")
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head_dim = d_model // n_heads
        self.group = n_heads // n_kv_heads
        hd = self.head_dim
        self.q_proj = nn.Linear(d_model, n_heads * hd, bias=bias)
        self.k_proj = nn.Linear(d_model, n_kv_heads * hd, bias=bias)
        self.v_proj = nn.Linear(d_model, n_kv_heads * hd, bias=bias)
        self.o_proj = nn.Linear(n_heads * hd, d_model, bias=bias)

    def forward(self, x, past_kv=None):
        b, t, _ = x.shape
        nk, g, d = self.n_kv_heads, self.group, self.head_dim
        # [B, T, n_kv, g, d]: head h = kv*g + j, which is exactly h // g grouping
        q = self.q_proj(x).view(b, t, nk, g, d)
        k = self.k_proj(x).view(b, t, nk, d).transpose(1, 2)
        v = self.v_proj(x).view(b, t, nk, d).transpose(1, 2)
        if past_kv is not None:
            k = torch.cat((past_kv[0], k), dim=2)
            v = torch.cat((past_kv[1], v), dim=2)
        s = k.shape[2]
        t_past = s - t
        scores = torch.einsum("bqkgd,bksd->bkgqs", q, k) * (1.0 / math.sqrt(d))
        qpos = torch.arange(t, device=x.device).unsqueeze(1) + t_past
        kpos = torch.arange(s, device=x.device).unsqueeze(0)
        hidden = kpos > qpos  # [T, S]
        scores = scores.masked_fill(hidden, float("-inf"))
        probs = scores.softmax(dim=-1)
        out = torch.einsum("bkgqs,bksd->bqkgd", probs, v).reshape(b, t, nk * g * d)
        return self.o_proj(out), (k, v)
