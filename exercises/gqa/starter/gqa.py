"""gqa: a grouped-query attention module with a KV cache (Ainslie et al., 2023).

Grade with:  quizzer exercise gqa --check
Write the attention yourself: torch.nn.functional.scaled_dot_product_attention,
torch.nn.MultiheadAttention and torch.nn.functional.multi_head_attention_forward are refused.
"""

from __future__ import annotations

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    """Causal self-attention with n_heads query heads sharing n_kv_heads key/value heads.

    n_kv_heads == n_heads is multi-head attention (MHA), n_kv_heads == 1 multi-query
    attention (MQA). head_dim = d_model // n_heads; query head h reads KV head
    h // (n_heads // n_kv_heads).
    """

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int, bias: bool = False) -> None:
        """Raise ValueError unless d_model % n_heads == 0 and n_heads % n_kv_heads == 0.

        Submodules, exactly these names (all nn.Linear, with a bias iff ``bias``):
          q_proj: d_model -> n_heads * head_dim
          k_proj: d_model -> n_kv_heads * head_dim
          v_proj: d_model -> n_kv_heads * head_dim
          o_proj: n_heads * head_dim -> d_model
        """
        super().__init__()
        # TODO 1: validate the head counts, store head_dim and the group size
        # TODO 2: create q_proj, k_proj, v_proj, o_proj
        raise NotImplementedError("GroupedQueryAttention.__init__")

    def forward(
        self, x: torch.Tensor, past_kv: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """x: [B, T, d_model]; past_kv: (keys, values) of the T_past earlier positions, each
        [B, n_kv_heads, T_past, head_dim], or None.

        Returns (out [B, T, d_model], (keys, values)) where keys and values are
        [B, n_kv_heads, T_past + T, head_dim]: the past followed by the new positions.
        New query i sits at position T_past + i and attends to keys 0 .. T_past + i.
        """
        # TODO 3: project x; split into heads: q [B, n_heads, T, d], k, v [B, n_kv_heads, T, d]
        # TODO 4: append the new keys/values to past_kv along the time axis
        # TODO 5: scores = q k^T / sqrt(head_dim), with query head h using KV head h // group
        # TODO 6: causal mask offset by T_past (-inf before the softmax), softmax over keys, @ v
        # TODO 7: merge the heads back to [B, T, n_heads * head_dim], apply o_proj
        raise NotImplementedError("GroupedQueryAttention.forward")
