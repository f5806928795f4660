"""Inputs for the torch track and the checks of one forward or backward call against the
float64 reference, naming the known mistake an output matches."""

from __future__ import annotations

from dataclasses import dataclass

import _ln_reference as ref
import pytest
import torch
from _torch_harness import (
    OUT_TOL,
    Fn,
    call,
    check_form,
    close,
    describe,
    half_stats_hint,
    mismatch,
    stat_tol,
)

F64 = torch.float64


@dataclass(frozen=True)
class Inputs:
    x: torch.Tensor
    weight: torch.Tensor
    bias: torch.Tensor
    dy: torch.Tensor
    eps: float

    @property
    def context(self) -> str:
        """The inputs in words, for messages."""
        return describe(self.x, self.eps)


def make(
    shape: tuple[int, ...],
    dtype: torch.dtype = torch.float32,
    device: str = "cpu",
    *,
    seed: int = 0,
    offset: float = 0.0,
    scale: float = 1.0,
    eps: float = 1e-5,
    affine: bool = True,
) -> Inputs:
    """x = offset + scale * N(0, 1); weight ~ 1 + 0.3 N(0, 1), bias ~ 0.2 N(0, 1)."""
    gen = torch.Generator().manual_seed(seed)
    d = shape[-1]
    x = offset + scale * torch.randn(shape, generator=gen, dtype=F64)
    w = 1 + 0.3 * torch.randn(d, generator=gen, dtype=F64) if affine else torch.ones(d)
    b = 0.2 * torch.randn(d, generator=gen, dtype=F64) if affine else torch.zeros(d)
    dy = torch.randn(shape, generator=gen, dtype=F64)
    return Inputs(*(t.to(device=device, dtype=dtype) for t in (x, w, b, dy)), eps=eps)


def stats_shape(x: torch.Tensor) -> tuple[int, ...]:
    """The shape of mean and rstd: one value per row."""
    return tuple(x.shape[:-1])


KEEPDIM = {
    "mean": ": one value per row, x.shape[:-1] (no keepdim)",
    "rstd": ": one value per row, x.shape[:-1] (no keepdim)",
}
SUMMED = {
    "dweight": ": weight is shared by every row, so sum dy * xhat over every leading dimension "
    "(all but the last), not only dim 0",
    "dbias": ": bias is shared by every row, so sum dy over every leading dimension (all but "
    "the last), not only dim 0",
}


def _named(checks: list[tuple[str, bool]]) -> str | None:
    for message, matches in checks:
        if matches:
            return message
    return None


# ---------------------------------------------------------------- forward


def layer_norm_forward(fn: Fn, case: Inputs, rule: str) -> None:
    """One call of the user's layer_norm_forward, checked against the float64 reference."""
    x, w, b, eps = case.x, case.weight, case.bias, case.eps
    context = case.context
    got = call(fn, "layer_norm_forward", (x, w, b, eps), context, ("x", "weight", "bias"))
    sd = ref.stats_dtype(x.dtype)
    check_form(
        "layer_norm_forward",
        got,
        [
            ("y", tuple(x.shape), x.dtype),
            ("mean", stats_shape(x), sd),
            ("rstd", stats_shape(x), sd),
        ],
        x.device,
        context,
        KEEPDIM,
    )
    y, mean, rstd = got
    want_y, want_mean, want_rstd = ref.layer_norm(x, w, b, eps)
    satol, srtol = stat_tol(x)
    otol = OUT_TOL[x.dtype]
    if not close(mean, want_mean, satol, srtol):
        pytest.fail(
            f"{rule}: the mean is wrong: {mismatch('mean', mean, want_mean, satol, srtol)} "
            f"({context}){half_stats_hint(x)}",
            pytrace=False,
        )
    if not close(rstd, want_rstd, satol, srtol):
        named = _named(
            [
                (
                    "the variance must be biased: divide the sum of squared deviations by D, "
                    "not D - 1 (your rstd matches D - 1)",
                    _matches(rstd, ref.layer_norm(x, w, b, eps, ddof=1)[2], want_rstd),
                ),
                (
                    "eps goes inside the square root: rstd = 1 / sqrt(var + eps); your rstd "
                    "matches 1 / (sqrt(var) + eps)",
                    _matches(rstd, ref.layer_norm(x, w, b, eps, eps_outside=True)[2], want_rstd),
                ),
                (
                    "eps is missing: rstd = 1 / sqrt(var + eps); your rstd matches 1 / sqrt(var)",
                    _matches(rstd, ref.layer_norm(x, w, b, 0.0)[2], want_rstd),
                ),
            ]
        )
        if named:
            pytest.fail(f"{named} ({context})", pytrace=False)
        pytest.fail(
            f"{rule}: rstd = 1 / sqrt(var + eps) is wrong: "
            f"{mismatch('rstd', rstd, want_rstd, satol, srtol)} ({context}){half_stats_hint(x)}",
            pytrace=False,
        )
    # a float32 mean is off by a few of its own ulps: y = (x - mean) * rstd inherits that
    otol = (otol[0] + satol * float(want_rstd.max()) * float(w.double().abs().max()), otol[1])
    if not close(y, want_y, *otol):
        pytest.fail(
            f"{rule}: y = (x - mean) * rstd * weight + bias is wrong although mean and rstd "
            f"are right: {mismatch('y', y, want_y, *otol)} ({context})",
            pytrace=False,
        )


def _matches(got: torch.Tensor, alt: torch.Tensor, want: torch.Tensor) -> bool:
    """got agrees with a mistaken value far better than with the right one."""
    g, a, w = (t.detach().cpu().double() for t in (got, alt, want))
    off_alt = float((g - a).abs().max())
    off_want = float((g - w).abs().max())
    return bool(torch.isfinite(a).all()) and off_alt < 0.1 * off_want


def rms_norm_forward(fn: Fn, case: Inputs, rule: str) -> None:
    """One call of the user's rms_norm_forward, checked against the float64 reference."""
    x, w, eps = case.x, case.weight, case.eps
    context = case.context
    got = call(fn, "rms_norm_forward", (x, w, eps), context, ("x", "weight"))
    sd = ref.stats_dtype(x.dtype)
    check_form(
        "rms_norm_forward",
        got,
        [("y", tuple(x.shape), x.dtype), ("rstd", stats_shape(x), sd)],
        x.device,
        context,
        KEEPDIM,
    )
    y, rstd = got
    want_y, want_rstd = ref.rms_norm(x, w, eps)
    satol, srtol = stat_tol(x)
    otol = OUT_TOL[x.dtype]
    if not close(rstd, want_rstd, satol, srtol):
        named = _named(
            [
                (
                    "RMSNorm does not subtract the mean: rstd = 1 / sqrt(mean(x^2) + eps) of x "
                    "itself; yours matches the centred x (that is LayerNorm's variance)",
                    _matches(rstd, ref.rms_norm(x, w, eps, subtract_mean=True)[1], want_rstd),
                ),
                (
                    "eps is missing: rstd = 1 / sqrt(mean(x^2) + eps); yours matches "
                    "1 / sqrt(mean(x^2))",
                    _matches(rstd, ref.rms_norm(x, w, 0.0)[1], want_rstd),
                ),
            ]
        )
        if named:
            pytest.fail(f"{named} ({context})", pytrace=False)
        pytest.fail(
            f"{rule}: rstd = 1 / sqrt(mean(x^2) + eps) is wrong: "
            f"{mismatch('rstd', rstd, want_rstd, satol, srtol)} ({context}){half_stats_hint(x)}",
            pytrace=False,
        )
    if not close(y, want_y, *otol):
        extra = ""
        if _matches(y, ref.rms_norm(x, w, eps, subtract_mean=True)[0], want_y):
            extra = "; RMSNorm does not subtract the mean: y = x * rstd * weight"
        pytest.fail(
            f"{rule}: y = x * rstd * weight is wrong although rstd is right: "
            f"{mismatch('y', y, want_y, *otol)} ({context}){extra}",
            pytrace=False,
        )


# ---------------------------------------------------------------- backward

GRAD_TOL = {torch.float64: 1e-10, torch.float32: 2e-5, torch.bfloat16: 2**-7, torch.float16: 2**-9}


def grad_close(got: torch.Tensor, want: torch.Tensor) -> tuple[bool, float, float]:
    """Tolerance relative to the largest |want| (dweight grows with the number of rows)."""
    rel = GRAD_TOL.get(got.dtype, 1e-5)
    scale = float(want.abs().max()) if want.numel() else 1.0
    atol = rel * max(scale, 1e-3)
    return close(got, want, atol, rel), atol, rel


def _given_stats(case: Inputs, rms: bool) -> tuple[torch.Tensor, ...]:
    """mean and rstd as a correct forward returns them (float32 for half inputs)."""
    sd = ref.stats_dtype(case.x.dtype)
    if rms:
        return (ref.rms_norm(case.x, case.weight, case.eps)[1].to(sd),)
    _, mean, rstd = ref.layer_norm(case.x, case.weight, case.bias, case.eps)
    return mean.to(sd), rstd.to(sd)


DROPPED = {
    "mean": "dx misses the path through the mean: every x_j moves the mean by 1/D, which "
    "subtracts mean(dy * weight) over the row: dx = rstd * (g - mean(g) - xhat * "
    "mean(g * xhat)) with g = dy * weight",
    "rstd": "dx misses the path through rstd: every x_j changes the variance, which "
    "subtracts xhat * mean(g * xhat) over the row: dx = rstd * (g - mean(g) - xhat * "
    "mean(g * xhat)) with g = dy * weight",
    "both": "dx treats mean and rstd as constants (dx = rstd * dy * weight): both depend on "
    "x; dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * weight",
}
RMS_DROPPED = {
    "rstd": "dx misses the path through rstd: rstd depends on every x_j; "
    "dx = rstd * (g - xhat * mean(g * xhat)) with g = dy * weight and xhat = x * rstd",
}


def layer_norm_backward(fn: Fn, case: Inputs, rule: str) -> None:
    """One call of the user's layer_norm_backward, checked against autograd in float64."""
    x, w, dy = case.x, case.weight, case.dy
    mean, rstd = _given_stats(case, rms=False)
    context = case.context
    got = call(
        fn,
        "layer_norm_backward",
        (dy, x, w, mean, rstd),
        context,
        ("dy", "x", "weight", "mean", "rstd"),
    )
    d = x.shape[-1]
    check_form(
        "layer_norm_backward",
        got,
        [("dx", tuple(x.shape), x.dtype), ("dweight", (d,), w.dtype), ("dbias", (d,), w.dtype)],
        x.device,
        context,
        SUMMED,
    )
    want = ref.layer_norm_grads(dy, x, w, case.bias, case.eps)
    _compare_grads(got, want, ("dx", "dweight", "dbias"), case, rule, DROPPED, rms=False)


def rms_norm_backward(fn: Fn, case: Inputs, rule: str) -> None:
    """One call of the user's rms_norm_backward, checked against autograd in float64."""
    x, w, dy = case.x, case.weight, case.dy
    (rstd,) = _given_stats(case, rms=True)
    context = case.context
    got = call(fn, "rms_norm_backward", (dy, x, w, rstd), context, ("dy", "x", "weight", "rstd"))
    d = x.shape[-1]
    check_form(
        "rms_norm_backward",
        got,
        [("dx", tuple(x.shape), x.dtype), ("dweight", (d,), w.dtype)],
        x.device,
        context,
        SUMMED,
    )
    want = ref.rms_norm_grads(dy, x, w, case.eps)
    _compare_grads(got, want, ("dx", "dweight"), case, rule, RMS_DROPPED, rms=True)


HARD_EPS = 1e-5  # the usual default, which a backward that recomputes rstd tends to hard-code


def _grads_in_input_dtype(case: Inputs, rms: bool) -> tuple[torch.Tensor, ...]:
    """The hand-written gradients computed in the input dtype (no upcast to float32)."""
    c, d = case.x.dtype, case.x.shape[-1]
    x, dy, w = case.x, case.dy.to(c), case.weight.to(c)
    stats = [t.to(c).unsqueeze(-1) for t in _given_stats(case, rms)]
    rstd = stats[-1]
    xhat = x * rstd if rms else (x - stats[0]) * rstd
    g = dy * w
    inner = g if rms else g - g.mean(dim=-1, keepdim=True)
    dx = rstd * (inner - xhat * (g * xhat).mean(dim=-1, keepdim=True))
    dw = (dy * xhat).reshape(-1, d).sum(dim=0)
    return (dx, dw) if rms else (dx, dw, dy.reshape(-1, d).sum(dim=0))


def _known_grad_mistakes(case: Inputs, rms: bool) -> list[tuple[str, tuple[torch.Tensor, ...]]]:
    """(message, the gradients they give) for mistakes that make sense for this case."""
    found = []
    if case.eps != HARD_EPS:
        if rms:
            alt = ref.rms_norm_grads(case.dy, case.x, case.weight, HARD_EPS)
        else:
            alt = ref.layer_norm_grads(case.dy, case.x, case.weight, case.bias, HARD_EPS)
        found.append(
            (
                f"the backward must use the rstd it is given (the forward's, with the caller's "
                f"eps = {case.eps:g}); your gradients match rstd recomputed from x with a "
                f"hard-coded eps = {HARD_EPS:g}",
                alt,
            )
        )
    if case.x.dtype in (torch.float16, torch.bfloat16):
        name = str(case.x.dtype).removeprefix("torch.")
        found.append(
            (
                f"compute the backward in float32 for {name} inputs: convert x, dy, weight, "
                f"mean and rstd to float32 first and cast the gradients back at the end; your "
                f"gradients match the same formulas evaluated in {name} (the mean rounded to "
                f"{name} shifts every xhat)",
                _grads_in_input_dtype(case, rms),
            )
        )
    return found


def _compare_grads(
    got: tuple[torch.Tensor, ...],
    want: tuple[torch.Tensor, ...],
    names: tuple[str, ...],
    case: Inputs,
    rule: str,
    dropped: dict[str, str],
    rms: bool,
) -> None:
    for index, (name, g, wv) in enumerate(zip(names, got, want, strict=True)):
        ok, atol, rtol = grad_close(g, wv)
        if ok:
            continue
        for message, alt in _known_grad_mistakes(case, rms):
            if _matches(g, alt[index], wv):
                pytest.fail(f"{message} ({case.context})", pytrace=False)
        if name == "dx":
            for drop, message in dropped.items():
                alt = ref.dx_without(case.dy, case.x, case.weight, case.eps, drop, rms=rms)
                if _matches(g, alt, wv):
                    pytest.fail(f"{message} ({case.context})", pytrace=False)
        if name != "dx" and case.x.dim() > 1:
            first_row = _row_only(case, name, rms)
            if first_row is not None and _matches(g, first_row, wv):
                pytest.fail(
                    f"{name} must be summed over every row: yours matches the first row only "
                    f"({case.context}){SUMMED[name]}",
                    pytrace=False,
                )
        pytest.fail(
            f"{rule}: {mismatch(name, g, wv, atol, rtol)} against autograd of the float64 "
            f"reference ({case.context})",
            pytrace=False,
        )


def _row_only(case: Inputs, name: str, rms: bool) -> torch.Tensor | None:
    d = case.x.shape[-1]
    x, dy = case.x.reshape(-1, d)[:1], case.dy.reshape(-1, d)[:1]
    if rms:
        grads = ref.rms_norm_grads(dy, x, case.weight, case.eps)
        return grads[1] if name == "dweight" else None
    grads = ref.layer_norm_grads(dy, x, case.weight, case.bias, case.eps)
    return grads[1] if name == "dweight" else grads[2]
