"""Calls of the torch track's functions under a watch for forbidden shortcuts, the checks of
what they return, and comparisons that name the broken rule."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
import torch
from _ln_reference import stats_dtype
from torch.overrides import TorchFunctionMode

Fn = Callable[..., Any]

# torch functions (by name, as torch_function sees them) that would do the exercise for you
SHORTCUTS = {
    "layer_norm": "torch.nn.functional.layer_norm",
    "native_layer_norm": "torch.native_layer_norm",
    "native_layer_norm_backward": "torch.ops.aten.native_layer_norm_backward",
    "rms_norm": "torch.nn.functional.rms_norm",
    "_fused_rms_norm": "torch._fused_rms_norm",
    "_fused_rms_norm_backward": "torch._fused_rms_norm_backward",
    "group_norm": "torch.nn.functional.group_norm",
    "native_group_norm": "torch.native_group_norm",
    "batch_norm": "torch.nn.functional.batch_norm",
    "native_batch_norm": "torch.native_batch_norm",
    "instance_norm": "torch.nn.functional.instance_norm",
    "var": "torch.var / Tensor.var",
    "std": "torch.std / Tensor.std",
    "var_mean": "torch.var_mean",
    "std_mean": "torch.std_mean",
}
AUTOGRAD = {"backward", "grad", "requires_grad_"}


class ForbiddenCall(Exception):
    """The user's code called a function the README rules out."""


class Watch(TorchFunctionMode):
    """Raises ForbiddenCall on a normalisation/variance shortcut or on any use of autograd
    (a tensor that requires grad, .backward(), torch.autograd.grad)."""

    def __init__(self, where: str) -> None:
        super().__init__()
        self.where = where

    def __torch_function__(
        self,
        func: Any,
        types: Sequence[type],
        args: Sequence[Any] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        name = getattr(func, "__name__", "")
        if name in SHORTCUTS:
            raise ForbiddenCall(
                f"{self.where} called {SHORTCUTS[name]}: the README rules out the library's "
                "normalisation and variance shortcuts; compute the mean and the variance "
                "yourself (two passes or Welford), biased (divide by D)"
            )
        if name in AUTOGRAD:
            raise ForbiddenCall(
                f"{self.where} used autograd ({name}): write the backward by hand from the "
                "chain rule, with no tensor that requires grad"
            )
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor) and out.requires_grad:
            raise ForbiddenCall(
                f"{self.where} used autograd (an intermediate tensor requires grad after "
                f"{name or func}): write the backward by hand from the chain rule"
            )
        return out


def describe(x: torch.Tensor, eps: float | None = None) -> str:
    """ "x [4, 9] float32, eps=1e-05", for messages."""
    text = f"x {list(x.shape)} {str(x.dtype).removeprefix('torch.')}"
    return text + (f", eps={eps:g}" if eps is not None else "")


def call(
    fn: Fn,
    name: str,
    args: tuple[Any, ...],
    context: str,
    labels: tuple[str, ...] = (),
) -> tuple[torch.Tensor, ...]:
    """``fn(*args)`` under the watch; inputs (named by ``labels``) must come back untouched."""
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    failure = None
    try:
        with Watch(name):
            result = fn(*args)
    except NotImplementedError as exc:
        failure = f"{name} is not implemented yet (NotImplementedError: {exc})"
    except ForbiddenCall as exc:
        failure = f"{exc} ({context})"
    except Exception as exc:
        failure = f"{name} raised {type(exc).__name__}: {exc} ({context})"
    if failure is not None:  # outside the except block: no chained traceback in the report
        pytest.fail(failure, pytrace=False)
    for i, (old, new) in enumerate(zip(before, args, strict=True)):
        if isinstance(old, torch.Tensor) and not torch.equal(old, new):
            what = (
                f"input `{labels[i]}` (argument {i + 1})"
                if i < len(labels)
                else f"argument {i + 1}"
            )
            pytest.fail(
                f"{name} modified its {what} in place ({context}): return new tensors",
                pytrace=False,
            )
    if not isinstance(result, (tuple, list)):
        pytest.fail(f"{name} must return a tuple, got {type(result).__name__}", pytrace=False)
    return tuple(result)


def check_form(
    name: str,
    result: tuple[Any, ...],
    expected: list[tuple[str, tuple[int, ...], torch.dtype]],
    device: torch.device,
    context: str,
    hints: dict[str, str] | None = None,
) -> None:
    """Count, type, shape, dtype and device of every output; finite values."""
    names = ", ".join(e[0] for e in expected)
    if len(result) != len(expected):
        pytest.fail(
            f"{name} must return {len(expected)} tensors ({names}), got {len(result)}",
            pytrace=False,
        )
    for out, (what, shape, dtype) in zip(result, expected, strict=True):
        if not isinstance(out, torch.Tensor):
            pytest.fail(
                f"{name}: {what} must be a torch.Tensor, got {type(out).__name__}", pytrace=False
            )
        if tuple(out.shape) != shape:
            extra = (hints or {}).get(what, "")
            pytest.fail(
                f"{name}: {what} has shape {list(out.shape)}, expected {list(shape)} "
                f"({context}){extra}",
                pytrace=False,
            )
        if out.dtype != dtype:
            pytest.fail(
                f"{name}: {what} has dtype {str(out.dtype).removeprefix('torch.')}, expected "
                f"{str(dtype).removeprefix('torch.')} ({context}){dtype_hint(what)}",
                pytrace=False,
            )
        if out.device != device:
            pytest.fail(
                f"{name}: {what} is on {out.device}, the input on {device} ({context})",
                pytrace=False,
            )
        if out.device.type != "meta" and not bool(torch.isfinite(out).all()):
            pytest.fail(
                f"{name}: {what} holds NaN or inf ({context}): is the variance negative or "
                "divided by zero (D - 1 with D = 1)?",
                pytrace=False,
            )


def dtype_hint(what: str) -> str:
    """The README rule for the dtype of ``what``."""
    if what in ("mean", "rstd"):
        return (
            ": statistics are float32 for float32, float16 and bfloat16 inputs and float64 "
            "for float64 inputs"
        )
    return ": outputs and gradients keep the dtype of the tensor they belong to"


def worst(got: torch.Tensor, want: torch.Tensor, atol: float, rtol: float) -> tuple[float, int]:
    """The largest excess of |got - want| over atol + rtol |want|, and its flat index."""
    g, w = got.detach().cpu().double().reshape(-1), want.detach().cpu().double().reshape(-1)
    excess = (g - w).abs() - (atol + rtol * w.abs())
    excess = torch.where(torch.isnan(g), torch.full_like(excess, torch.inf), excess)
    i = int(excess.argmax()) if excess.numel() else 0
    return (float(excess[i]) if excess.numel() else -1.0), i


def close(got: torch.Tensor, want: torch.Tensor, atol: float, rtol: float) -> bool:
    """Every element within atol + rtol |want| (NaN never is)."""
    return worst(got, want, atol, rtol)[0] <= 0


def mismatch(what: str, got: torch.Tensor, want: torch.Tensor, atol: float, rtol: float) -> str:
    """'y[1, 3] is 0.5, expected 0.49 (|difference| 0.01 > 0.001 allowed)' at the worst place."""
    _, i = worst(got, want, atol, rtol)
    shape = tuple(want.shape)
    index = [int(v) for v in torch.unravel_index(torch.tensor(i), shape)] if shape else []
    g = float(got.detach().cpu().double().reshape(-1)[i])
    w = float(want.detach().cpu().double().reshape(-1)[i])
    where = f"{what}[{', '.join(map(str, index))}]" if index else what
    allowed = atol + rtol * abs(w)
    return (
        f"{where} is {g:.9g}, expected {w:.9g} (|difference| {abs(g - w):.3g} > {allowed:.3g} "
        "allowed)"
    )


# |got - want| <= atol + rtol * |want|: outputs in the input dtype, statistics in float32
OUT_TOL = {
    torch.float64: (1e-10, 1e-10),
    torch.float32: (2e-5, 2e-5),
    torch.bfloat16: (1e-3, 2**-8),
    torch.float16: (1e-3, 2**-10),
}
STAT_RTOL = {torch.float64: 1e-11, torch.float32: 2e-6}


def stat_tol(x: torch.Tensor) -> tuple[float, float]:
    """(atol, rtol) for mean and rstd: float32 statistics, whatever the input precision."""
    rtol = STAT_RTOL[stats_dtype(x.dtype)]
    scale = float(x.detach().double().abs().max()) if x.numel() else 1.0
    return rtol * max(scale, 1.0), rtol


def half_stats_hint(x: torch.Tensor) -> str:
    """For half-precision inputs: where the statistics must be computed."""
    if x.dtype in (torch.float16, torch.bfloat16):
        name = str(x.dtype).removeprefix("torch.")
        return (
            f"; with {name} inputs accumulate the statistics in float32: convert x first, "
            f"then take the mean and variance (statistics computed in {name} and converted "
            "afterwards keep only its 8 to 11 bits)"
        )
    return ""
