"""rope: rotary position embeddings for q and k, both layouts, any positions.

Grade with:  quizzer exercise rope --check
README.md (next to this file) states the exact rules: shapes, layouts, precision, errors.
"""

import torch


def apply_rope(
    q: torch.Tensor,
    k: torch.Tensor,
    positions: torch.Tensor,
    base: float = 10000.0,
    layout: str = "half",
    rotary_dim: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """RoPE applied to the queries and keys of attention.

    q          [B, Hq, T, D], k [B, Hk, T, D]; same B, T, D, dtype and device; not modified.
    positions  int64, [T] (shared by the batch) or [B, T] (one row per sequence); any values,
               e.g. T_past .. T_past + T - 1 for a decode step with a KV cache.
    base       theta_i = base^(-2i/r) is the angle pair i turns by per position.
    layout     "half": pairs (i, i + r/2) (GPT-NeoX / Llama); "interleaved": (2i, 2i + 1).
    rotary_dim r: rotate features 0 .. r-1, pass r .. D-1 through; None means r = D.

    Returns new tensors (q_rot, k_rot), shapes, dtypes and device of q and k. Angles, cos and
    sin in float32 (float64 for float64 inputs). ValueError: r odd, not in 1 .. D, or an
    unknown layout.
    """
    # TODO 1: check layout and r (even, 0 < r <= D); raise ValueError otherwise
    # TODO 2: theta_i = base^(-2i/r) and angles positions * theta_i, on q.device, in float32+
    # TODO 3: rotate each pair (x1, x2) -> (x1 cos - x2 sin, x1 sin + x2 cos) for the layout
    # TODO 4: pass features r .. D-1 through, cast back to the input dtype, return new tensors
    raise NotImplementedError("apply_rope")
