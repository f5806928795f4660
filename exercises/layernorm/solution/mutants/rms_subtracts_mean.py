# mutant: RMSNorm centres x first, as LayerNorm does
"""LayerNorm and RMSNorm over the last dimension, forward and hand-written backward (torch).

Statistics are two-pass: the mean first, then the mean of the squared deviations from it,
both in the compute dtype (float32, or float64 for float64 inputs). Never E[x^2] - E[x]^2:
with a large mean that difference cancels and loses every significant bit.
"""

import torch


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.promote_types(dtype, torch.float32)


def layer_norm_forward(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """y = (x - mean) * rstd * weight + bias over the last dim; returns (y, mean, rstd)."""
    c = _compute_dtype(x.dtype)
    xc = x.to(c)
    mean = xc.mean(dim=-1)
    centered = xc - mean.unsqueeze(-1)
    var = (centered * centered).mean(dim=-1)  # biased: divide by D
    rstd = torch.rsqrt(var + eps)
    y = centered * rstd.unsqueeze(-1) * weight.to(c) + bias.to(c)
    return y.to(x.dtype), mean, rstd


def layer_norm_backward(
    dy: torch.Tensor,
    x: torch.Tensor,
    weight: torch.Tensor,
    mean: torch.Tensor,
    rstd: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gradients of sum(dy * y) for the forward above: (dx, dweight, dbias)."""
    c = _compute_dtype(x.dtype)
    r = rstd.to(c).unsqueeze(-1)
    xhat = (x.to(c) - mean.to(c).unsqueeze(-1)) * r
    dyc = dy.to(c)
    g = dyc * weight.to(c)
    # y depends on x directly, through the mean and through rstd: three terms
    dx = r * (g - g.mean(dim=-1, keepdim=True) - xhat * (g * xhat).mean(dim=-1, keepdim=True))
    d = x.shape[-1]  # weight and bias serve every row: sum over all the leading dims
    dweight = (dyc * xhat).reshape(-1, d).sum(dim=0)
    dbias = dyc.reshape(-1, d).sum(dim=0)
    return dx.to(x.dtype), dweight.to(weight.dtype), dbias.to(weight.dtype)


def rms_norm_forward(
    x: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """y = x * rstd * weight with rstd = 1 / sqrt(mean(x^2) + eps); returns (y, rstd)."""
    c = _compute_dtype(x.dtype)
    xc = x.to(c)
    xc = xc - xc.mean(dim=-1, keepdim=True)
    rstd = torch.rsqrt((xc * xc).mean(dim=-1) + eps)
    y = xc * rstd.unsqueeze(-1) * weight.to(c)
    return y.to(x.dtype), rstd


def rms_norm_backward(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients of sum(dy * y) for rms_norm_forward: (dx, dweight)."""
    c = _compute_dtype(x.dtype)
    r = rstd.to(c).unsqueeze(-1)
    xhat = x.to(c) * r
    dyc = dy.to(c)
    g = dyc * weight.to(c)
    dx = r * (g - xhat * (g * xhat).mean(dim=-1, keepdim=True))
    dweight = (dyc * xhat).reshape(-1, x.shape[-1]).sum(dim=0)
    return dx.to(x.dtype), dweight.to(weight.dtype)
