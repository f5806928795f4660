# alternative: each pair is one complex number x1 + i x2 (torch.view_as_complex for the
# interleaved layout, torch.complex for the half one) multiplied by torch.polar(1, m theta_i)
"""RoPE as a multiplication by unit complex numbers."""

import torch


def apply_rope(
    q: torch.Tensor,
    k: torch.Tensor,
    positions: torch.Tensor,
    base: float = 10000.0,
    layout: str = "half",
    rotary_dim: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    d = q.shape[-1]
    r = d if rotary_dim is None else rotary_dim
    if layout not in ("half", "interleaved"):
        raise ValueError(f"unknown layout {layout!r}: use 'half' or 'interleaved'")
    if r % 2 or not 1 <= r <= d:
        raise ValueError(f"rotary_dim must be even and between 1 and D = {d}, got {r}")
    real = torch.float64 if q.dtype == torch.float64 else torch.float32
    pos = positions.to(device=q.device, dtype=real)
    pos = pos.reshape(-1 if pos.dim() == 2 else 1, 1, pos.shape[-1], 1)  # [B or 1, 1, T, 1]
    inv_freq = 1.0 / base ** (torch.arange(r // 2, device=q.device, dtype=real) * 2 / r)
    angles = pos * inv_freq  # [B or 1, 1, T, r/2]
    turn = torch.polar(torch.ones_like(angles), angles)  # cos + i sin
    return _turn(q, turn, r, layout), _turn(k, turn, r, layout)


def _turn(x: torch.Tensor, turn: torch.Tensor, r: int, layout: str) -> torch.Tensor:
    head = x[..., :r].to(turn.real.dtype)
    if layout == "interleaved":
        z = torch.view_as_complex(head.reshape(*head.shape[:-1], r // 2, 2).contiguous())
        out = torch.view_as_real(z * turn).flatten(-2)
    else:
        z = torch.complex(head[..., : r // 2], head[..., r // 2 :])
        w = z * turn
        out = torch.cat((w.real, w.imag), dim=-1)
    return torch.cat((out.to(x.dtype), x[..., r:]), dim=-1)
