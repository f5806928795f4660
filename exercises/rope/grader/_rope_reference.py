"""The grader's own RoPE, in float64 on the CPU, written pair by pair from index lists.

Deliberately unlike a vectorised solution (no rotate-half, no complex numbers): for every
pair (a, b) of the layout, ``out[a] = x[a] cos - x[b] sin`` and ``out[b] = x[a] sin + x[b] cos``
with the angle ``position * base ** (-2i / r)``. The keyword knobs build the known mistakes,
so that a wrong result can be named by the mistake it matches.
"""

from __future__ import annotations

import torch

LAYOUTS = ("half", "interleaved")


def pair_indices(r: int, layout: str) -> tuple[list[int], list[int]]:
    """The two features of each of the r / 2 pairs: (first of each pair, second of each)."""
    n = r // 2
    if layout == "interleaved":
        return [2 * i for i in range(n)], [2 * i + 1 for i in range(n)]
    return list(range(n)), [i + n for i in range(n)]


def exponents(n: int, r: int, d: int, rule: str) -> torch.Tensor:
    i = torch.arange(n, dtype=torch.float64)
    if rule == "2i/r":  # the right one
        return 2 * i / r
    if rule == "i/r":  # i where 2i belongs
        return i / r
    if rule == "2i/d":  # the whole head size where only the rotary part belongs
        return 2 * i / d
    if rule == "-2i/r":  # frequencies that grow instead of shrink
        return -2 * i / r
    raise ValueError(rule)


def full_positions(positions: torch.Tensor, b: int, t: int) -> torch.Tensor:
    pos = positions.detach().cpu().long()
    return (pos.unsqueeze(0) if pos.dim() == 1 else pos).expand(b, t)


def rope(
    x: torch.Tensor,
    positions: torch.Tensor,
    base: float = 10000.0,
    layout: str = "half",
    rotary_dim: int | None = None,
    *,
    rule: str = "2i/r",
    sign: float = 1.0,
    rotate_tail: bool = False,
) -> torch.Tensor:
    """RoPE of one tensor ``x`` [B, H, T, D] as float64 on the CPU."""
    x64 = x.detach().cpu().double()
    b, _, t, d = x64.shape
    r = d if rotary_dim is None or rotate_tail else rotary_dim
    n = r // 2
    theta = torch.tensor(float(base), dtype=torch.float64) ** (-exponents(n, r, d, rule))
    angle = full_positions(positions, b, t).double()[..., None] * theta  # [B, T, n]
    cos, sin = angle.cos()[:, None], angle.sin()[:, None]  # [B, 1, T, n]
    first, second = pair_indices(r, layout)
    xa, xb = x64[..., first], x64[..., second]
    out = x64.clone()
    out[..., first] = xa * cos - sign * xb * sin
    out[..., second] = sign * xa * sin + xb * cos
    return out
