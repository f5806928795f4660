# mutant: the causal mask is built on a fixed device (device="cpu"), not the input's
"""Grouped-query attention (GQA; Ainslie et al., 2023, arXiv:2305.13245) with a KV cache.

n_heads query heads share n_kv_heads key/value heads: query head h reads KV head
h // (n_heads // n_kv_heads). n_kv_heads == n_heads is multi-head attention (MHA) and
n_kv_heads == 1 is multi-query attention (MQA). The g = n_heads // n_kv_heads query heads of
a group are laid out as an extra axis, so K and V broadcast over it and are never copied.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    """Causal self-attention with n_heads query heads and n_kv_heads key/value heads."""

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int, bias: bool = False) -> None:
        super().__init__()
        if n_heads <= 0 or n_kv_heads <= 0:
            raise ValueError(f"head counts must be positive, got {n_heads} and {n_kv_heads}")
        if d_model % n_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        if n_heads % n_kv_heads != 0:
            raise ValueError(f"n_heads={n_heads} is not divisible by n_kv_heads={n_kv_heads}")
        self.d_model = d_model
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.head_dim = d_model // n_heads
        self.group = n_heads // n_kv_heads
        self.q_proj = nn.Linear(d_model, n_heads * self.head_dim, bias=bias)
        self.k_proj = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=bias)
        self.v_proj = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=bias)
        self.o_proj = nn.Linear(n_heads * self.head_dim, d_model, bias=bias)

    def forward(
        self, x: torch.Tensor, past_kv: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """x [B, T, d_model], past_kv ([B, n_kv, T_past, head_dim]) * 2 or None.

        Returns (out [B, T, d_model], (keys, values)) with the cache covering all
        T_past + T positions.
        """
        B, T, _ = x.shape
        kv, g, d = self.n_kv_heads, self.group, self.head_dim
        # heads of one group are adjacent in q_proj's output: head h = k * g + j
        q = self.q_proj(x).view(B, T, kv, g, d).permute(0, 2, 3, 1, 4)  # [B, kv, g, T, d]
        k = self.k_proj(x).view(B, T, kv, d).transpose(1, 2)  # [B, kv, T, d]
        v = self.v_proj(x).view(B, T, kv, d).transpose(1, 2)
        if past_kv is not None:
            k = torch.cat([past_kv[0], k], dim=2)
            v = torch.cat([past_kv[1], v], dim=2)
        S = k.shape[2]  # T_past + T
        scores = q @ k.unsqueeze(2).transpose(-2, -1) / math.sqrt(d)  # [B, kv, g, T, S]
        # new query i sits at absolute position S - T + i and sees keys 0 .. S - T + i
        visible = torch.ones(T, S, dtype=torch.bool, device="cpu").tril(diagonal=S - T)
        scores = scores.masked_fill(~visible, float("-inf"))
        out = scores.softmax(dim=-1) @ v.unsqueeze(2)  # [B, kv, g, T, d]
        out = out.permute(0, 3, 1, 2, 4).reshape(B, T, self.n_heads * d)
        return self.o_proj(out), (k, v)
