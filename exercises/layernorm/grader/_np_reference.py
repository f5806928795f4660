"""The numba track's float64 reference and comparisons, in numpy (the track runs without
importing torch, which keeps a simulator run short)."""

from __future__ import annotations

import numpy as np

# |got - want| <= atol + rtol * |want| for float32 outputs; float32 statistics
OUT_TOL = (2e-5, 2e-5)
STAT_RTOL = 2e-6


def layer_norm(
    x: np.ndarray,
    weight: np.ndarray,
    bias: np.ndarray,
    eps: float,
    *,
    ddof: int = 0,
    eps_outside: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(y, mean, rstd) in float64, row by row; knobs as in the torch track's reference."""
    x = x.astype(np.float64)
    d = x.shape[-1]
    mean = x.sum(axis=-1) / d
    dev = x - mean[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        var = (dev * dev).sum(axis=-1) / (d - ddof)
        rstd = 1.0 / (np.sqrt(var) + eps) if eps_outside else 1.0 / np.sqrt(var + eps)
    y = dev * rstd[:, None] * weight.astype(np.float64) + bias.astype(np.float64)
    return y, mean, rstd


def rms_norm(
    x: np.ndarray, weight: np.ndarray, eps: float, *, subtract_mean: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """(y, rstd) in float64; ``subtract_mean`` centres x first (a known mistake)."""
    x = x.astype(np.float64)
    if subtract_mean:
        x = x - x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt((x * x).sum(axis=-1) / x.shape[-1] + eps)
    return x * rstd[:, None] * weight.astype(np.float64), rstd


def stat_tol(x: np.ndarray) -> tuple[float, float]:
    """(atol, rtol) for mean and rstd."""
    scale = float(np.abs(x).max()) if x.size else 1.0
    return STAT_RTOL * max(scale, 1.0), STAT_RTOL


def _excess(got: np.ndarray, want: np.ndarray, atol: float, rtol: float) -> np.ndarray:
    g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
    excess = np.abs(g - w) - (atol + rtol * np.abs(w))
    return np.where(np.isnan(g), np.inf, excess)


def close(got: np.ndarray, want: np.ndarray, atol: float, rtol: float) -> bool:
    """Every element within atol + rtol |want| (NaN never is)."""
    return bool((_excess(got, want, atol, rtol) <= 0).all())


def mismatch(what: str, got: np.ndarray, want: np.ndarray, atol: float, rtol: float) -> str:
    """'y[1, 3] is 0.5, expected 0.49 (|difference| 0.01 > 0.001 allowed)' at the worst place."""
    i = int(np.argmax(_excess(got, want, atol, rtol)))
    index = np.unravel_index(i, want.shape)
    g, w = float(got.ravel()[i]), float(want.ravel()[i])
    return (
        f"{what}[{', '.join(str(int(k)) for k in index)}] is {g:.9g}, expected {w:.9g} "
        f"(|difference| {abs(g - w):.3g} > {atol + rtol * abs(w):.3g} allowed)"
    )
