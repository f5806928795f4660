"""Torch track, part 1: ``layer_norm_forward`` and ``rms_norm_forward``.

Exact small rows first (the mean, a biased variance, eps inside the square root), then the
affine parameters, any number of leading dims, every dtype (statistics in float32 for half
inputs, outputs in the input dtype), a large mean in float32 that a one-pass
E[x^2] - E[x]^2 cannot survive, and seeded random shapes reported smallest first. Every call
runs under a watch that fails on torch's layer_norm / rms_norm / var / std shortcuts.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import _torch_cases as cases
import pytest
import torch

pytestmark = pytest.mark.track("torch")
Fn = Callable[..., Any]

DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.float64]
SHAPES = [(9,), (4, 9), (2, 3, 10), (2, 1, 3, 12)]


def dtype_id(dtype: torch.dtype) -> str:
    """torch.bfloat16 -> "bfloat16"."""
    return str(dtype).removeprefix("torch.")


def exact_rows(device: str, eps: float) -> cases.Inputs:
    """Rows whose mean and variance are exact in binary: [1, 2, 3, 4] has mean 2.5 and
    biased variance 1.25 (unbiased: 5/3)."""
    x = torch.tensor(
        [[1.0, 2.0, 3.0, 4.0], [-3.0, -1.0, 1.0, 3.0], [8.0, 8.0, 8.0, 8.0], [0.0, 0.0, 0.0, 4.0]],
        device=device,
    )
    ones, zeros = torch.ones(4, device=device), torch.zeros(4, device=device)
    return cases.Inputs(x, ones, zeros, torch.ones_like(x), eps)


# ---------------------------------------------------------------- LayerNorm


def test_layer_norm_exact_rows(ln_forward: Fn, device: str) -> None:
    """Four rows of D = 4 with eps = 0.25, weight 1, bias 0: mean 2.5 and var 1.25 for
    [1, 2, 3, 4]; a constant row gives y = 0 and rstd = 1 / sqrt(eps)."""
    cases.layer_norm_forward(ln_forward, exact_rows(device, 0.25), "exact rows")


def test_layer_norm_eps_inside_the_square_root(ln_forward: Fn, device: str) -> None:
    """A small variance (x scaled by 0.1) and eps = 0.5: 1 / sqrt(var + eps) and
    1 / (sqrt(var) + eps) differ by 20%."""
    case = cases.make((3, 16), device=device, scale=0.1, eps=0.5, seed=1)
    cases.layer_norm_forward(ln_forward, case, "eps = 0.5 on a small variance")


def test_layer_norm_weight_and_bias(ln_forward: Fn, device: str) -> None:
    """Random weight and bias, D = 7."""
    case = cases.make((5, 7), device=device, offset=2.0, seed=2)
    cases.layer_norm_forward(ln_forward, case, "with weight and bias")


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_layer_norm_any_leading_dims(ln_forward: Fn, device: str, shape: tuple[int, ...]) -> None:
    """Normalise over the last dim only; mean and rstd have shape x.shape[:-1]."""
    case = cases.make(shape, device=device, offset=-1.0, seed=3)
    cases.layer_norm_forward(ln_forward, case, "leading dims")


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_layer_norm_dtypes(ln_forward: Fn, device: str, dtype: torch.dtype) -> None:
    """y in the input dtype, mean and rstd in float32 (float64 for float64 inputs) and as
    precise as float32 statistics are, even for bfloat16 and float16 inputs."""
    case = cases.make((6, 200), dtype, device, offset=3.0, seed=4)
    cases.layer_norm_forward(ln_forward, case, f"{dtype_id(dtype)} input")


LARGE_MEAN = [(1e4, (4, 1000)), (-3e4, (2, 2048)), (1e3, (3, 333))]


@pytest.mark.parametrize(
    ("offset", "shape"),
    LARGE_MEAN,
    ids=[f"mean={o:g}-{'x'.join(map(str, s))}" for o, s in LARGE_MEAN],
)
def test_layer_norm_large_mean_float32(
    ln_forward: Fn, device: str, offset: float, shape: tuple[int, ...]
) -> None:
    """x = offset + N(0, 1) in float32: the variance (about 1) is tiny next to E[x^2]."""
    case = cases.make(shape, torch.float32, device, offset=offset, seed=5)
    message = None
    try:
        cases.layer_norm_forward(ln_forward, case, f"a large mean ({offset:g} + noise)")
    except pytest.fail.Exception as exc:
        message = str(exc.msg)
    if message is not None:
        pytest.fail(
            f"{message}; with a large mean, E[x^2] - E[x]^2 in float32 cancels catastrophically "
            f"(both terms near {offset * offset:.3g}, float32 keeps about 7 digits): compute "
            "the variance in two passes, mean((x - mean)^2), or with Welford's algorithm",
            pytrace=False,
        )


def test_layer_norm_large_mean_float64(ln_forward: Fn, device: str) -> None:
    """x = 1e6 + N(0, 1) in float64: even float64 loses the variance to E[x^2] - E[x]^2."""
    offset = 1e6
    case = cases.make((4, 512), torch.float64, device, offset=offset, seed=8)
    message = None
    try:
        cases.layer_norm_forward(ln_forward, case, f"a large mean in float64 ({offset:g} + noise)")
    except pytest.fail.Exception as exc:
        message = str(exc.msg)
    if message is not None:
        pytest.fail(
            f"{message}; with a mean of {offset:g}, the one-pass variance E[x^2] - E[x]^2 "
            f"cancels catastrophically even in float64 (both terms near {offset * offset:.3g}, "
            "float64 keeps about 16 digits, the variance is about 1): compute the variance in "
            "two passes, mean((x - mean)^2), or with Welford's algorithm",
            pytrace=False,
        )


def random_cases(count: int, seed: int) -> list[tuple[tuple[int, ...], torch.dtype, dict]]:
    """Shapes with D not a power of two (and D = 1, 2), mixed dtypes, eps and offsets,
    smallest first."""
    rng = random.Random(seed)
    sizes = [1, 2, 3, 5, 7, 13, 31, 33, 63, 100, 127, 129, 257, 300, 769, 1000]
    found = []
    for _ in range(count):
        d = rng.choice(sizes)
        lead = tuple(rng.randint(1, 4) for _ in range(rng.randint(0, 3)))
        dtype = rng.choice([torch.float32, torch.float32, torch.bfloat16, torch.float64])
        knobs = {
            "offset": rng.choice([0.0, 0.5, -2.0, 10.0]),
            "scale": rng.choice([1.0, 0.3, 4.0]),
            "eps": rng.choice([1e-5, 1e-6, 1e-3, 0.1]),
            "seed": rng.randint(0, 10_000),
        }
        found.append(((*lead, d), dtype, knobs))
    return sorted(found, key=lambda c: (math.prod(c[0]), c[0]))


def run_fuzz(check: Callable[[cases.Inputs], None], seed: int, device: str) -> None:
    """Run every random case; report the smallest one that fails."""
    for shape, dtype, knobs in random_cases(24, seed):
        check(cases.make(shape, dtype, device, **knobs))


def test_layer_norm_random_shapes(ln_forward: Fn, device: str) -> None:
    """24 seeded random cases, smallest first."""
    run_fuzz(
        lambda c: cases.layer_norm_forward(ln_forward, c, "random shapes, smallest failing"),
        seed=11,
        device=device,
    )


# ---------------------------------------------------------------- RMSNorm


def test_rms_norm_exact_rows(rms_forward: Fn, device: str) -> None:
    """[1, 2, 3, 4] has mean square 7.5: rstd = 1 / sqrt(7.5 + 0.25). No mean is taken out."""
    cases.rms_norm_forward(rms_forward, exact_rows(device, 0.25), "exact rows")


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_rms_norm_any_leading_dims(rms_forward: Fn, device: str, shape: tuple[int, ...]) -> None:
    """RMSNorm over the last dim only; rstd has shape x.shape[:-1]."""
    case = cases.make(shape, device=device, offset=1.0, seed=6)
    cases.rms_norm_forward(rms_forward, case, "leading dims")


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_rms_norm_dtypes(rms_forward: Fn, device: str, dtype: torch.dtype) -> None:
    """y in the input dtype, rstd in float32 (float64 for float64 inputs)."""
    case = cases.make((6, 200), dtype, device, offset=0.5, seed=7)
    cases.rms_norm_forward(rms_forward, case, f"{dtype_id(dtype)} input")


def test_rms_norm_random_shapes(rms_forward: Fn, device: str) -> None:
    """24 seeded random cases, smallest first."""
    run_fuzz(
        lambda c: cases.rms_norm_forward(rms_forward, c, "random shapes, smallest failing"),
        seed=12,
        device=device,
    )
