# mutant: layer_norm_backward ignores the given rstd and recomputes it with a hard-coded eps = 1e-5
import torch


def _c(x):
    return torch.promote_types(x.dtype, torch.float32)


def layer_norm_forward(x, weight, bias, eps):
    c = _c(x)
    xc = x.to(c)
    mean = xc.mean(dim=-1)
    centered = xc - mean.unsqueeze(-1)
    var = (centered * centered).mean(dim=-1)
    rstd = torch.rsqrt(var + eps)
    y = centered * rstd.unsqueeze(-1) * weight.to(c) + bias.to(c)
    return y.to(x.dtype), mean, rstd


def layer_norm_backward(dy, x, weight, mean, rstd):
    c = _c(x)
    D = x.shape[-1]
    xc, dyc = x.to(c), dy.to(c)
    cen = xc - mean.to(c).unsqueeze(-1)
    r = torch.rsqrt((cen * cen).mean(-1, keepdim=True) + 1e-5)
    xhat = cen * r
    g = dyc * weight.to(c)
    dx = r * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
    dw = (dyc * xhat).reshape(-1, D).sum(0)
    db = dyc.reshape(-1, D).sum(0)
    return dx.to(x.dtype), dw.to(weight.dtype), db.to(weight.dtype)


def rms_norm_forward(x, weight, eps):
    c = _c(x)
    xc = x.to(c)
    rstd = torch.rsqrt((xc * xc).mean(dim=-1) + eps)
    y = xc * rstd.unsqueeze(-1) * weight.to(c)
    return y.to(x.dtype), rstd


def rms_norm_backward(dy, x, weight, rstd):
    c = _c(x)
    D = x.shape[-1]
    xc, dyc = x.to(c), dy.to(c)
    r = rstd.to(c).unsqueeze(-1)
    xhat = xc * r
    g = dyc * weight.to(c)
    dx = r * (g - xhat * (g * xhat).mean(-1, keepdim=True))
    dw = (dyc * xhat).reshape(-1, D).sum(0)
    return dx.to(x.dtype), dw.to(weight.dtype)
