# mutant: positions are converted to the compute dtype but left on their own device, not moved to q.device
"""Rotary position embeddings (RoPE) for the queries and keys of attention.

Pair i of a head (two features, chosen by the layout) is a point in the plane; the token at
position m turns it by the angle m * theta_i with theta_i = base^(-2i/r), where r is the
number of rotated features. q_m . k_n then depends on the positions only through m - n.

The angles are computed from the given positions (not from 0 .. T-1), so a decode step at
any offset, and rows of a batch at different offsets, get the right rotation. Angles, cos and
sin are computed in float32, or in float64 for float64 inputs; the result is cast back.
"""

import torch

LAYOUTS = ("half", "interleaved")


def apply_rope(
    q: torch.Tensor,
    k: torch.Tensor,
    positions: torch.Tensor,
    base: float = 10000.0,
    layout: str = "half",
    rotary_dim: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """RoPE applied to q [B, Hq, T, D] and k [B, Hk, T, D] at ``positions`` ([T] or [B, T]).

    Returns new tensors (q_rot, k_rot) with the shapes, dtypes and device of q and k.
    """
    d = q.shape[-1]
    r = d if rotary_dim is None else rotary_dim
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    if not 0 < r <= d or r % 2:
        raise ValueError(f"the rotated size must be even and in 1 .. D = {d}, got {r}")
    cos, sin = _cos_sin(positions, r, base, q)
    return _rotate(q, cos, sin, r, layout), _rotate(k, cos, sin, r, layout)


def _compute_dtype(x: torch.Tensor) -> torch.dtype:
    """float32, or float64 when the input is float64."""
    return torch.promote_types(x.dtype, torch.float32)


def _cos_sin(
    positions: torch.Tensor, r: int, base: float, q: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of the angles, [B or 1, 1, T, r/2], in the compute dtype on q's device."""
    dtype = _compute_dtype(q)
    exponent = torch.arange(0, r, 2, dtype=dtype, device=q.device) / r  # 2i / r
    theta = base**-exponent
    pos = positions.to(dtype=dtype)  # stays where it came from
    if pos.dim() == 1:
        pos = pos.unsqueeze(0)  # shared by every batch row
    angles = pos.unsqueeze(-1) * theta  # [B or 1, T, r/2]
    return angles.cos().unsqueeze(1), angles.sin().unsqueeze(1)


def _rotate(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, r: int, layout: str
) -> torch.Tensor:
    rot = x[..., :r].to(cos.dtype)
    if layout == "interleaved":
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
        out = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)
    else:
        x1, x2 = rot[..., : r // 2], rot[..., r // 2 :]
        out = torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
    return torch.cat((out.to(x.dtype), x[..., r:]), dim=-1)
