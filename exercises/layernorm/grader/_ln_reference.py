"""The grader's float64 LayerNorm / RMSNorm, with knobs that reproduce known mistakes.

Forward: written out from the definitions. Backward: torch.autograd through the float64
forward (independent of any hand-derived formula), or, for diagnosis only, the hand formula
with one of its terms dropped.
"""

from __future__ import annotations

import torch

F64 = torch.float64


def stats_dtype(dtype: torch.dtype) -> torch.dtype:
    """float32 statistics for float32 and half inputs, float64 for float64."""
    return torch.promote_types(dtype, torch.float32)


def layer_norm(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    eps: float,
    *,
    ddof: int = 0,
    eps_outside: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(y, mean, rstd) in float64; ``ddof=1`` divides the variance by D - 1, ``eps_outside``
    computes 1 / (sqrt(var) + eps)."""
    x = x.to(F64)
    d = x.shape[-1]
    mean = x.sum(dim=-1) / d
    dev = x - mean.unsqueeze(-1)
    var = (dev * dev).sum(dim=-1) / (d - ddof) if d > ddof else torch.full_like(mean, torch.nan)
    rstd = 1.0 / (var.sqrt() + eps) if eps_outside else 1.0 / (var + eps).sqrt()
    y = dev * rstd.unsqueeze(-1) * weight.to(F64) + bias.to(F64)
    return y, mean, rstd


def rms_norm(
    x: torch.Tensor, weight: torch.Tensor, eps: float, *, subtract_mean: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """(y, rstd) in float64; ``subtract_mean`` centres x first (that is LayerNorm, not RMS)."""
    x = x.to(F64)
    if subtract_mean:
        x = x - x.mean(dim=-1, keepdim=True)
    rstd = 1.0 / ((x * x).sum(dim=-1) / x.shape[-1] + eps).sqrt()
    return x * rstd.unsqueeze(-1) * weight.to(F64), rstd


def layer_norm_grads(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dx, dweight, dbias) of sum(dy * y) by autograd through the float64 forward."""
    xs, ws, bs = (t.detach().to(F64).requires_grad_() for t in (x, weight, bias))
    with torch.enable_grad():
        y, _, _ = layer_norm(xs, ws, bs, eps)
        dx, dw, db = torch.autograd.grad(y, (xs, ws, bs), dy.to(F64))
    return dx, dw, db


def rms_norm_grads(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """(dx, dweight) of sum(dy * y) by autograd through the float64 forward."""
    xs, ws = (t.detach().to(F64).requires_grad_() for t in (x, weight))
    with torch.enable_grad():
        y, _ = rms_norm(xs, ws, eps)
        dx, dw = torch.autograd.grad(y, (xs, ws), dy.to(F64))
    return dx, dw


def dx_without(
    dy: torch.Tensor,
    x: torch.Tensor,
    weight: torch.Tensor,
    eps: float,
    drop: str,
    rms: bool = False,
) -> torch.Tensor:
    """The hand-written dx with one path of the chain rule dropped: ``drop`` is "mean"
    (d mean / dx), "rstd" (d rstd / dx) or "both" (dx = rstd * dy * weight)."""
    x = x.to(F64)
    if rms:
        _, rstd = rms_norm(x, weight, eps)
        xhat = x * rstd.unsqueeze(-1)
    else:
        _, mean, rstd = layer_norm(x, weight, torch.zeros_like(weight), eps)
        xhat = (x - mean.unsqueeze(-1)) * rstd.unsqueeze(-1)
    g = dy.to(F64) * weight.to(F64)
    dx = g.clone()
    if drop not in ("mean", "both") and not rms:
        dx = dx - g.mean(dim=-1, keepdim=True)
    if drop not in ("rstd", "both"):
        dx = dx - xhat * (g * xhat).mean(dim=-1, keepdim=True)
    return dx * rstd.unsqueeze(-1)
