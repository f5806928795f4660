"""Behaviour tests for the numerics answers (quant, prec, red, perf, gpu topics):
quantisation against exact rounding, summation against exact sums, scans against
prefix sums, counting formulas against their worked examples and brute force."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
import torch

from tests.bank_code.blocks import load_block


def test_int8_quantize_round_trip() -> None:
    ns = load_block("quant-float-int8-conversion", 0)
    x = torch.tensor(
        [-1e9, -128.6, -0.5, 0.5, 1.5, 2.5, 126.4, 127.5, 1e9, float("inf"), -float("inf")]
    )
    q = ns["quantize"](x, 1.0)
    assert q.dtype == torch.int8
    assert q.tolist() == [-128, -128, 0, 0, 2, 2, 126, 127, 127, 127, -128]  # half to even
    assert ns["quantize"](torch.tensor([0.0]), 0.1, zp=-128, qmin=-128).tolist() == [-128]
    torch.manual_seed(0)
    y = torch.randn(1000) * 3
    scale = y.abs().max() / 127
    err = ns["dequantize"](ns["quantize"](y, scale), scale) - y
    assert err.abs().max() <= scale / 2 + 1e-6


def test_calibration_scales() -> None:
    ns = load_block("quant-calibration-code-approach", 0)
    x = torch.tensor([1.0, -4.0, float("nan"), float("inf"), 2.0])
    assert ns["scale_minmax"](x).item() == pytest.approx(4.0 / 127)
    assert ns["scale_minmax"](torch.tensor([])).item() == pytest.approx(1e-8 / 127)
    assert ns["scale_minmax"](torch.zeros(3)).item() == pytest.approx(1e-8 / 127)
    big = torch.cat([torch.ones(9999), torch.tensor([1e6])])
    assert ns["scale_percentile"](big, pct=99.99).item() == pytest.approx(1.0 / 127)
    assert ns["scale_percentile"](big, pct=100.0).item() == pytest.approx(1e6 / 127)
    assert ns["scale_percentile"](torch.tensor([3.0]), pct=1.0).item() == pytest.approx(3.0 / 127)
    assert ns["scale_percentile"](torch.tensor([float("nan")])).item() == pytest.approx(1e-8 / 127)


def test_llm_int8_decomposition() -> None:
    decomp = load_block("quant-llm-int8-mixed-decomposition", 0)["int8_matmul_decomp"]
    torch.manual_seed(0)
    x, w = torch.randn(5, 16), torch.randn(16, 7)
    x[:, 3] *= 40  # an outlier feature column
    exact = x @ w
    got = decomp(x, w)
    assert (got - exact).abs().max() < 0.05 * exact.abs().max()
    only_outliers = torch.full((2, 4), 10.0)
    torch.testing.assert_close(
        decomp(only_outliers, torch.ones(4, 3)), only_outliers @ torch.ones(4, 3)
    )
    zeros = torch.zeros(3, 4)
    assert not decomp(zeros, torch.ones(4, 2)).any()  # all-zero rows: no 0/0


def test_lsq_fake_quant_forward_and_gradients() -> None:
    ns = load_block("quant-qat-fake-quant-ste-lsq", 0)
    x = torch.tensor([-10.0, -0.74, 0.0, 0.26, 0.74, 3.4, 10.0], requires_grad=True)
    s = torch.tensor(0.5, requires_grad=True)
    y = ns["lsq_fake_quant"](x, s, bits=4)
    assert y.tolist() == [-4.0, -0.5, 0.0, 0.5, 0.5, 3.5, 3.5]  # clamp to [-8, 7] steps of 0.5
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0]  # STE inside the range only
    assert s.grad is not None and math.isfinite(s.grad.item())
    u = ns["lsq_fake_quant"](torch.tensor([-1.0, 20.0]), torch.tensor(1.0), bits=2, signed=False)
    assert u.tolist() == [0.0, 3.0]
    with pytest.raises(AssertionError):
        ns["lsq_fake_quant"](torch.tensor([]), s)


def test_kahan_and_pairwise_sums() -> None:
    kahan = load_block("prec-kahan-compensated-summation", 0)["kahan_sum"]
    pairwise = load_block("red-float-summation-error", 0)["pairwise_sum"]
    rng = np.random.default_rng(0)
    for x in (
        np.array([]),
        np.array([3.5]),
        rng.normal(size=1001),
        np.full(10_001, 0.1),
        rng.normal(size=7) * 1e30,
    ):
        exact = float(sum(Fraction(float(v)) for v in x.astype(np.float32)))
        for total in (kahan(x), pairwise(x)):
            assert isinstance(total, np.float32)
            assert abs(float(total) - exact) <= 1e-6 * max(1.0, float(np.abs(x).sum()))
    big_then_small = np.array([2.0**24] + [1.0] * 64, np.float32)  # naive FP32 sum: 2**24
    assert kahan(big_then_small) == 2**24 + 64
    assert pairwise(np.ones(2**24 + 4, np.float32)) == 2**24 + 4


def test_red_hillis_steele_scan() -> None:
    scan = load_block("red-work-depth-reduce-scan", 0)["hillis_steele"]
    for n in (0, 1, 2, 3, 8, 13, 64):
        x = list(range(-3, n - 3))
        out, adds, steps = scan(x)
        assert out == list(np.cumsum(x)) if n else out == []
        assert steps == (math.ceil(math.log2(n)) if n > 1 else 0)
        assert adds == sum(n - 2**i for i in range(steps))  # n log n - (n - 1) for powers of 2


def test_perf_brent_bounds() -> None:
    bounds = load_block("perf-work-depth-brent-scan-counting", 0)["brent_bounds"]

    def hillis_steele(n: int) -> tuple[int, int]:
        return n * int(math.log2(n)) - (n - 1), int(math.log2(n))

    def blelloch(n: int) -> tuple[int, int]:
        return 2 * (n - 1), 2 * int(math.log2(n))

    # the card's table, and the reduction of 2^26 floats on 132 x 2048 threads
    assert bounds(*hillis_steele(32), 32) == (5, 8) and bounds(*blelloch(32), 32) == (10, 11)
    assert bounds(*hillis_steele(2**20), 2**14) == (1217, 1235)
    assert bounds(*blelloch(2**20), 2**14) == (128, 167)
    assert bounds(2**26 - 1, 26, 132 * 2048) == (249, 274)
    assert bounds(0, 0, 4) == (0, 0) and bounds(100, 100, 64) == (100, 100)  # a chain
    # a greedy level-by-level schedule of any DAG always lands inside the bounds
    rng = random.Random(0)
    for _ in range(2000):
        levels = [rng.randint(1, 50) for _ in range(rng.randint(1, 12))]
        p = rng.choice((1, 2, 3, 8, 32, 100))
        greedy = sum(math.ceil(w / p) for w in levels)
        lower, upper = bounds(sum(levels), len(levels), p)
        assert lower <= greedy <= upper <= sum(levels) / p + len(levels)
        if p == 1:
            assert lower == greedy == upper == sum(levels)
    for bad in ((5, 6, 4), (5, 0, 4), (5, 2, 0)):
        with pytest.raises(ValueError):
            bounds(*bad)


def test_occupancy_calculator() -> None:
    occupancy = load_block("perf-occupancy-arithmetic-granularity", 0)["occupancy"]
    assert occupancy(256, 90, 40 * 1024) == 0.25  # the worked example of the card
    assert occupancy(1024, 32, 0) == 1.0
    assert occupancy(1024, 64, 0) == 0.5  # registers: 64 x 32 x 32 warps = all 64K
    assert occupancy(32, 0, 0) == 0.5  # the 32-blocks-per-SM limit: 32 of 64 warps
    assert occupancy(1025, 32, 0) == 0.0 and occupancy(0, 32, 0) == 0.0  # launch fails
    assert occupancy(128, 256, 0) == 0.0 and occupancy(128, 32, 228 * 1024) == 0.0
    assert occupancy(33, 32, 0) == 1.0  # 2 warps a block (the partial one counts), 32 blocks
    assert occupancy(256, 255, 0) == 0.125


def test_alpha_beta_message_sizing() -> None:
    ns = load_block("perf-alpha-beta-message-sizing", 0)
    assert ns["efficiency"](0, 5.0, 100.0) == 0.0
    half = 5.0 * 100.0 * 1e3  # n_1/2 = alpha x bandwidth
    assert ns["efficiency"](half, 5.0, 100.0) == pytest.approx(0.5)
    for frac in (0.0, 0.5, 0.9, 0.99):
        n = ns["min_size_for"](frac, 5.0, 100.0)
        assert ns["efficiency"](n, 5.0, 100.0) == pytest.approx(frac) if n else frac == 0.0
    for bad in (1.0, -0.1):
        with pytest.raises(ValueError):
            ns["min_size_for"](bad, 5.0, 100.0)


def test_linear_index_and_strides() -> None:
    ns = load_block("gpu-linear-index-strides-nchw", 0)
    shape = (2, 3, 4, 5)  # NCHW
    strides = torch.empty(shape).stride()
    nhwc = torch.empty(2, 4, 5, 3).permute(0, 3, 1, 2).stride()  # channels-last storage
    for i in range(ns["numel"](shape)):
        coords = ns["unravel"](i, shape)
        assert coords == list(np.unravel_index(i, shape))
        assert ns["ravel"](coords, strides) == i
        assert (
            ns["ravel"](coords, nhwc)
            == torch.arange(120).view(2, 4, 5, 3).permute(0, 3, 1, 2)[tuple(coords)]
        )
    assert ns["numel"](()) == 1 and ns["unravel"](0, ()) == []
    for bad in (-1, 120):
        with pytest.raises(IndexError):
            ns["unravel"](bad, shape)
    with pytest.raises(IndexError):
        ns["unravel"](0, (3, 0))


def test_warp_sector_count() -> None:
    sectors = load_block("gpu-2d-block-warp-composition", 0)["warp_sectors"]
    assert sectors(32, 8, 4096) == [4] * 8  # one 128-byte row per warp
    assert sectors(16, 16, 4096) == [4] * 8  # two rows of 64 bytes: 2 sectors each
    assert sectors(8, 4, 4096) == [4]  # four rows of 32 bytes
    assert sectors(1, 32, 4096) == [32]  # a column: one sector per thread
    assert sectors(33, 1, 4096) == [4, 1]  # a partial second warp
    assert sectors(4, 8, 4096, elem=8, sector=32) == [8]
    rng = random.Random(0)
    for _ in range(50):  # brute force over every byte each thread touches
        bx, by = rng.randint(1, 40), rng.randint(1, 8)
        row, elem = rng.choice((128, 132, 4096)), rng.choice((2, 4, 8))
        if bx * elem > row:
            continue
        want = []
        for w in range(0, bx * by, 32):
            touched = {
                ((t // bx) * row + (t % bx) * elem + b) // 32
                for t in range(w, min(w + 32, bx * by))
                for b in range(elem)
            }
            want.append(len(touched))
        assert sectors(bx, by, row, elem=elem) == want
