"""Torch track, part 2: ``layer_norm_backward`` and ``rms_norm_backward``, written by hand.

Every gradient is compared with torch.autograd through the grader's float64 forward. The
mean and rstd passed in are those a correct forward returns. dweight and dbias sum over
every row, whatever the leading dims. Autograd inside the user's backward fails the check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import _torch_cases as cases
import pytest
import torch
from test_part1_forward import DTYPES, SHAPES, dtype_id, run_fuzz

pytestmark = pytest.mark.track("torch")
Fn = Callable[..., Any]


def test_layer_norm_backward_small_float64(ln_backward: Fn, device: str) -> None:
    """Three rows of D = 5 in float64 (1e-10 of autograd): all three paths of x into y."""
    case = cases.make((3, 5), torch.float64, device, offset=1.0, seed=20)
    cases.layer_norm_backward(ln_backward, case, "float64, D = 5")


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_layer_norm_backward_any_leading_dims(
    ln_backward: Fn, device: str, shape: tuple[int, ...]
) -> None:
    """dweight and dbias have shape [D]: summed over every leading dim."""
    case = cases.make(shape, torch.float64, device, offset=-0.5, seed=21)
    cases.layer_norm_backward(ln_backward, case, "leading dims")


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_layer_norm_backward_dtypes(ln_backward: Fn, device: str, dtype: torch.dtype) -> None:
    """Gradients in the dtype of the tensor they belong to, computed in float32 or wider."""
    case = cases.make((4, 3, 150), dtype, device, offset=2.0, seed=22)
    cases.layer_norm_backward(ln_backward, case, f"{dtype_id(dtype)} input")


@pytest.mark.parametrize("rms", [False, True], ids=["layer_norm", "rms_norm"])
def test_backward_uses_the_given_rstd(
    ln_backward: Fn, rms_backward: Fn, device: str, rms: bool
) -> None:
    """eps = 0.5 on a small variance (x scaled by 0.3), float64: a backward that recomputes
    rstd with its own eps (say 1e-5) instead of using the rstd it is given is far off."""
    case = cases.make((3, 16), torch.float64, device, scale=0.3, eps=0.5, seed=26)
    rule = "eps = 0.5: use the given rstd"
    if rms:
        cases.rms_norm_backward(rms_backward, case, rule)
    else:
        cases.layer_norm_backward(ln_backward, case, rule)


HALF = [torch.bfloat16, torch.float16]


@pytest.mark.parametrize("dtype", HALF, ids=dtype_id)
def test_layer_norm_backward_half_inputs_in_float32(
    ln_backward: Fn, device: str, dtype: torch.dtype
) -> None:
    """Half-precision inputs with a mean of 40: the backward must work in float32; the mean
    rounded to the input dtype shifts every x - mean by up to half its spacing there."""
    case = cases.make((8, 256), dtype, device, offset=40.0, seed=27)
    rule = f"{dtype_id(dtype)} input with a mean of 40: compute the backward in float32"
    cases.layer_norm_backward(ln_backward, case, rule)


def test_layer_norm_backward_random_shapes(ln_backward: Fn, device: str) -> None:
    """24 seeded random cases, smallest first."""
    run_fuzz(
        lambda c: cases.layer_norm_backward(ln_backward, c, "random shapes, smallest failing"),
        seed=13,
        device=device,
    )


def test_rms_norm_backward_small_float64(rms_backward: Fn, device: str) -> None:
    """Three rows of D = 5 in float64: the direct path and the path through rstd."""
    case = cases.make((3, 5), torch.float64, device, offset=1.0, seed=23)
    cases.rms_norm_backward(rms_backward, case, "float64, D = 5")


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_rms_norm_backward_any_leading_dims(
    rms_backward: Fn, device: str, shape: tuple[int, ...]
) -> None:
    """dweight has shape [D]: summed over every leading dim."""
    case = cases.make(shape, torch.float64, device, offset=0.5, seed=24)
    cases.rms_norm_backward(rms_backward, case, "leading dims")


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_rms_norm_backward_dtypes(rms_backward: Fn, device: str, dtype: torch.dtype) -> None:
    """Gradients in the dtype of the tensor they belong to."""
    case = cases.make((4, 3, 150), dtype, device, offset=0.5, seed=25)
    cases.rms_norm_backward(rms_backward, case, f"{dtype_id(dtype)} input")


def test_rms_norm_backward_random_shapes(rms_backward: Fn, device: str) -> None:
    """24 seeded random cases, smallest first."""
    run_fuzz(
        lambda c: cases.rms_norm_backward(rms_backward, c, "random shapes, smallest failing"),
        seed=14,
        device=device,
    )
