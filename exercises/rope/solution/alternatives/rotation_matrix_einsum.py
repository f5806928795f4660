# alternative: an explicit 2x2 rotation matrix per (row, token, pair), applied to the stacked
# pairs with torch.einsum; the layout only decides how pairs are gathered and put back
"""RoPE with explicit rotation matrices."""

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
        raise ValueError(f"layout must be 'half' or 'interleaved', not {layout!r}")
    if r <= 0 or r > d or r % 2 != 0:
        raise ValueError(f"rotary_dim must be an even size in 1 .. {d}, got {r}")
    dtype = torch.promote_types(q.dtype, torch.float32)
    pos = positions.to(device=q.device, dtype=dtype)
    if pos.dim() == 1:
        pos = pos.expand(q.shape[0], -1)  # [B, T]
    i = torch.arange(r // 2, device=q.device, dtype=dtype)
    theta = torch.exp(-(2 * i / r) * torch.log(torch.tensor(base, dtype=dtype, device=q.device)))
    angle = pos[..., None] * theta  # [B, T, r/2]
    c, s = angle.cos(), angle.sin()
    rot = torch.stack((torch.stack((c, -s), -1), torch.stack((s, c), -1)), -2)  # [B, T, r/2, 2, 2]
    return _apply(q, rot, r, layout), _apply(k, rot, r, layout)


def _apply(x: torch.Tensor, rot: torch.Tensor, r: int, layout: str) -> torch.Tensor:
    head = x[..., :r].to(rot.dtype)
    if layout == "interleaved":
        pairs = head.unflatten(-1, (r // 2, 2))  # [B, H, T, r/2, 2]
    else:
        pairs = torch.stack((head[..., : r // 2], head[..., r // 2 :]), dim=-1)
    turned = torch.einsum("btpij,bhtpj->bhtpi", rot, pairs)
    if layout == "interleaved":
        out = turned.flatten(-2)
    else:
        out = torch.cat((turned[..., 0], turned[..., 1]), dim=-1)
    return torch.cat((out.to(x.dtype), x[..., r:]), dim=-1)
