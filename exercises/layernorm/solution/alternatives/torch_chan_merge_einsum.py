# alternative: per-chunk (n, mean, M2) merged with Chan-Golub-LeVeque, sums via einsum
import torch

CHUNK = 64


def _cdtype(x):
    return torch.promote_types(x.dtype, torch.float32)


def _moments(xc):
    """xc [R, D] in the compute dtype -> (mean [R], var [R]) by merging column chunks."""
    R, D = xc.shape
    n = 0
    mean = torch.zeros(R, dtype=xc.dtype, device=xc.device)
    m2 = torch.zeros(R, dtype=xc.dtype, device=xc.device)
    for s in range(0, D, CHUNK):
        blk = xc[:, s : s + CHUNK]
        nb = blk.shape[1]
        mb = blk.sum(dim=1) / nb
        m2b = ((blk - mb[:, None]) ** 2).sum(dim=1)
        tot = n + nb
        delta = mb - mean
        mean = mean + delta * (nb / tot)
        m2 = m2 + m2b + delta * delta * (n * nb / tot)
        n = tot
    return mean, m2 / n


def layer_norm_forward(x, weight, bias, eps):
    c = _cdtype(x)
    lead, D = x.shape[:-1], x.shape[-1]
    xc = x.to(c).reshape(-1, D)
    mean, var = _moments(xc)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = torch.addcmul(bias.to(c), (xc - mean[:, None]) * rstd[:, None], weight.to(c))
    return y.reshape(x.shape).to(x.dtype), mean.reshape(lead), rstd.reshape(lead)


def layer_norm_backward(dy, x, weight, mean, rstd):
    c = _cdtype(x)
    D = x.shape[-1]
    xc = x.to(c).reshape(-1, D)
    dyc = dy.to(c).reshape(-1, D)
    r = rstd.to(c).reshape(-1, 1)
    mu = mean.to(c).reshape(-1, 1)
    xmu = xc - mu
    w = weight.to(c)
    g = dyc * w
    # explicit three paths: direct, through the mean, through rstd (d rstd / d var = -rstd^3 / 2)
    dxhat_direct = g * r
    dvar = torch.einsum("rd,rd->r", g, xmu)[:, None] * (-0.5) * r**3
    dmean = -torch.einsum("rd->r", g)[:, None] * r
    dx = dxhat_direct + dvar * 2.0 * xmu / D + dmean / D
    dw = torch.einsum("rd,rd->d", dyc, xmu * r)
    db = torch.einsum("rd->d", dyc)
    return dx.reshape(x.shape).to(x.dtype), dw.to(weight.dtype), db.to(weight.dtype)


def rms_norm_forward(x, weight, eps):
    c = _cdtype(x)
    D = x.shape[-1]
    xc = x.to(c)
    ms = torch.einsum("...d,...d->...", xc, xc) / D
    rstd = (ms + eps).rsqrt()
    y = xc * rstd[..., None] * weight.to(c)
    return y.to(x.dtype), rstd


def rms_norm_backward(dy, x, weight, rstd):
    c = _cdtype(x)
    D = x.shape[-1]
    xc = x.to(c).reshape(-1, D)
    dyc = dy.to(c).reshape(-1, D)
    r = rstd.to(c).reshape(-1, 1)
    g = dyc * weight.to(c)
    # d/dx of x * r(x): g * r - x * r^3 * sum(g * x) / D
    dx = g * r - xc * r**3 * (g * xc).sum(1, keepdim=True) / D
    dw = (dyc * xc * r).sum(0)
    return dx.reshape(x.shape).to(x.dtype), dw.to(weight.dtype)
