# alternative: Welford-style statistics merged chunk by chunk (Chan et al.), sums not means
"""LayerNorm / RMSNorm with statistics built from column chunks of 32.

Each chunk gives a count, a mean and M2 (sum of squared deviations from the chunk's mean);
chunks are merged with the parallel update of Chan, Golub and LeVeque, as a Welford kernel
merges per-thread partial results. The backward is written with sums and 1/D.
"""

import torch

CHUNK = 32


def _stats(xc: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(mean, M2) over the last dim, merged from chunks of CHUNK columns."""
    count = 0
    mean = torch.zeros(xc.shape[:-1], dtype=xc.dtype, device=xc.device)
    m2 = torch.zeros_like(mean)
    for start in range(0, xc.shape[-1], CHUNK):
        part = xc[..., start : start + CHUNK]
        n_b = part.shape[-1]
        mean_b = part.sum(dim=-1) / n_b
        m2_b = ((part - mean_b.unsqueeze(-1)) ** 2).sum(dim=-1)
        total = count + n_b
        delta = mean_b - mean
        mean = mean + delta * (n_b / total)
        m2 = m2 + m2_b + delta * delta * (count * n_b / total)
        count = total
    return mean, m2


def layer_norm_forward(x, weight, bias, eps):
    work = torch.promote_types(x.dtype, torch.float32)
    xc = x.to(work)
    d = x.shape[-1]
    mean, m2 = _stats(xc)
    rstd = 1.0 / torch.sqrt(m2 / d + eps)
    y = (xc - mean[..., None]) * rstd[..., None]
    y = torch.addcmul(bias.to(work), y, weight.to(work))
    return y.to(x.dtype), mean, rstd


def layer_norm_backward(dy, x, weight, mean, rstd):
    work = torch.promote_types(x.dtype, torch.float32)
    d = x.shape[-1]
    xhat = (x.to(work) - mean.to(work)[..., None]) * rstd.to(work)[..., None]
    g = dy.to(work) * weight.to(work)
    sum_g = g.sum(dim=-1, keepdim=True)
    sum_gx = (g * xhat).sum(dim=-1, keepdim=True)
    dx = (rstd.to(work)[..., None] / d) * (d * g - sum_g - xhat * sum_gx)
    flat_dy = dy.to(work).reshape(-1, d)
    dweight = torch.einsum("nd,nd->d", flat_dy, xhat.reshape(-1, d))
    dbias = flat_dy.sum(dim=0)
    return dx.to(x.dtype), dweight.to(weight.dtype), dbias.to(weight.dtype)


def rms_norm_forward(x, weight, eps):
    work = torch.promote_types(x.dtype, torch.float32)
    xc = x.to(work)
    rstd = 1.0 / torch.sqrt((xc**2).sum(dim=-1) / x.shape[-1] + eps)
    return (xc * rstd[..., None] * weight.to(work)).to(x.dtype), rstd


def rms_norm_backward(dy, x, weight, rstd):
    work = torch.promote_types(x.dtype, torch.float32)
    d = x.shape[-1]
    r = rstd.to(work)[..., None]
    xhat = x.to(work) * r
    g = dy.to(work) * weight.to(work)
    dx = (r / d) * (d * g - xhat * (g * xhat).sum(dim=-1, keepdim=True))
    dweight = torch.einsum("nd,nd->d", dy.to(work).reshape(-1, d), xhat.reshape(-1, d))
    return dx.to(x.dtype), dweight.to(weight.dtype)
