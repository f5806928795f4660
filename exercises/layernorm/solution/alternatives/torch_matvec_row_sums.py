# alternative: row sums as matrix-vector products on x flattened to 2-D (blind solver)
import torch


def _flat(x):
    c = torch.promote_types(x.dtype, torch.float32)
    D = x.shape[-1]
    return x.to(c).reshape(-1, D), c, D


def layer_norm_forward(x, weight, bias, eps):
    x2, c, D = _flat(x)
    ones = torch.full((D,), 1.0 / D, dtype=c, device=x.device)
    mean = x2 @ ones  # first pass
    xm = x2 - mean[:, None]
    var = (xm * xm) @ ones  # second pass
    rstd = (var + eps) ** -0.5
    y = (xm * rstd[:, None]) * weight.to(c)[None, :] + bias.to(c)[None, :]
    shp = x.shape[:-1]
    return y.reshape(x.shape).to(x.dtype), mean.reshape(shp), rstd.reshape(shp)


def layer_norm_backward(dy, x, weight, mean, rstd):
    x2, c, D = _flat(x)
    dy2 = dy.to(c).reshape(-1, D)
    r = rstd.to(c).reshape(-1)[:, None]
    xhat = (x2 - mean.to(c).reshape(-1)[:, None]) * r
    g = dy2 * weight.to(c)
    a = g.sum(1, keepdim=True) / D
    b = (g * xhat).sum(1, keepdim=True) / D
    dx = (g - a - xhat * b) * r
    ones_r = torch.ones(dy2.shape[0], dtype=c, device=x.device)
    dw = ones_r @ (dy2 * xhat)
    db = ones_r @ dy2
    return dx.reshape(x.shape).to(x.dtype), dw.to(weight.dtype), db.to(weight.dtype)


def rms_norm_forward(x, weight, eps):
    x2, c, D = _flat(x)
    ms = (x2 * x2) @ torch.full((D,), 1.0 / D, dtype=c, device=x.device)
    rstd = 1.0 / torch.sqrt(ms + eps)
    y = x2 * rstd[:, None] * weight.to(c)
    return y.reshape(x.shape).to(x.dtype), rstd.reshape(x.shape[:-1])


def rms_norm_backward(dy, x, weight, rstd):
    x2, c, D = _flat(x)
    dy2 = dy.to(c).reshape(-1, D)
    r = rstd.to(c).reshape(-1)[:, None]
    xhat = x2 * r
    g = dy2 * weight.to(c)
    dx = r * (g - xhat * (g * xhat).mean(1, keepdim=True))
    dw = torch.ones(dy2.shape[0], dtype=c, device=x.device) @ (dy2 * xhat)
    return dx.reshape(x.shape).to(x.dtype), dw.to(weight.dtype)
