"""Grader for gqa: ``GroupedQueryAttention(d_model, n_heads, n_kv_heads, bias)`` with
``forward(x, past_kv=None) -> (out, (keys, values))``.

Checks, cheapest first: constructor errors, projection names and shapes, parameter count;
built-in attention is refused; tensors stay on the input's device (also checked on the meta
device); the output and the cache have the right form; the output equals the grader's
float64 attention (written head by head from the module's own weights) for MHA, GQA and
MQA, and a wrong output is traced to its cause (scale, head grouping, mask);
causality; a given KV cache, decoding token by token and in chunks; gradients; float32 on
the device; on a GPU, a larger layer in float32 and bfloat16.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import torch
from gqa_harness import (
    KV,
    PROJECTIONS,
    Config,
    Harness,
    check_cache,
    check_output,
    check_projections,
    compare,
    worst,
)
from gqa_reference import attention, new_kv, weights_of

F64 = 1e-9  # float64: any real mistake is off by far more
F32 = 2e-4  # float32 against the float64 reference (outputs are of order 1)

MHA = Config(64, 4, 4)
GQA = Config(64, 8, 2)
MQA = Config(64, 8, 1)
GQA_BIAS = Config(96, 12, 4, bias=True)


def inputs(
    cfg: Config, B: int, T: int, seed: int, device: str = "cpu", dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    gen = torch.Generator().manual_seed(1000 + seed)
    return torch.randn(B, T, cfg.d_model, generator=gen, dtype=torch.float64).to(device, dtype)


def random_past(cfg: Config, B: int, t_past: int, seed: int) -> KV:
    """A cache of ``t_past`` earlier positions, float64 on the CPU."""
    gen = torch.Generator().manual_seed(seed)
    shape = (B, cfg.n_kv_heads, t_past, cfg.head_dim)
    keys, values = (torch.randn(shape, generator=gen, dtype=torch.float64) for _ in range(2))
    return keys, values


def describe(cfg: Config, B: int, T: int, t_past: int | None = None) -> str:
    past = "" if t_past is None else f", T_past={t_past}"
    return f"{cfg}, B={B}, T={T}{past}"


# ---------------------------------------------------------------- structure


@pytest.mark.parametrize(
    ("d_model", "n_heads", "n_kv_heads", "reason"),
    [
        (30, 4, 2, "d_model % n_heads != 0"),
        (64, 8, 3, "n_heads % n_kv_heads != 0"),
        (64, 4, 8, "more KV heads than query heads"),
    ],
    ids=["d_model-30-heads-4", "heads-8-kv-3", "heads-4-kv-8"],
)
def test_rejects_bad_head_counts(
    gqa: Harness, d_model: int, n_heads: int, n_kv_heads: int, reason: str
) -> None:
    call = f"GroupedQueryAttention({d_model}, {n_heads}, {n_kv_heads})"
    try:
        gqa.cls(d_model, n_heads, n_kv_heads)
    except ValueError:
        return
    except NotImplementedError as exc:
        pytest.fail(
            f"GroupedQueryAttention is not implemented yet (NotImplementedError: {exc})",
            pytrace=False,
        )
    except Exception as exc:
        pytest.fail(
            f"{call} raised {type(exc).__name__}: {exc}; expected ValueError ({reason})",
            pytrace=False,
        )
    pytest.fail(f"{call} must raise ValueError ({reason})", pytrace=False)


@pytest.mark.parametrize("cfg", [MHA, GQA, MQA, GQA_BIAS], ids=lambda c: c.tag)
def test_projection_names_and_shapes(gqa: Harness, cfg: Config) -> None:
    module = gqa.construct(cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.bias)
    assert isinstance(module, torch.nn.Module), "GroupedQueryAttention must be an nn.Module"
    check_projections(module, cfg)


@pytest.mark.parametrize("cfg", [MHA, GQA, MQA, GQA_BIAS], ids=lambda c: c.tag)
def test_parameter_count(gqa: Harness, cfg: Config) -> None:
    """K and V have n_kv_heads heads: GQA saves (1 - n_kv/n_heads) of MHA's K/V weights."""
    module = gqa.construct(cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.bias)
    d, kv = cfg.d_model, cfg.n_kv_heads * cfg.head_dim
    want = 2 * d * d + 2 * d * kv + (2 * d + 2 * kv if cfg.bias else 0)
    got = sum(p.numel() for p in module.parameters())
    mha = 4 * d * d + (4 * d if cfg.bias else 0)
    assert got == want, (
        f"parameter count: {got} parameters for {cfg}, expected {want} (MHA of this width has "
        f"{mha}): only the four projections, K and V with n_kv_heads * head_dim = {kv} outputs"
    )


# ---------------------------------------------------------------- form


def test_no_builtin_attention(gqa: Harness) -> None:
    """scaled_dot_product_attention and nn.MultiheadAttention are refused (see README)."""
    module = gqa.build(GQA)
    x = inputs(GQA, 2, 5, seed=0)
    gqa.call(module, x, None, describe(GQA, 2, 5))
    gqa.call(module, x[:, :1], random_past(GQA, 2, 5, seed=0), describe(GQA, 2, 1, 5))


def test_tensors_stay_on_the_input_device(gqa: Harness) -> None:
    """Module and input on PyTorch's meta device (shapes, no data): a tensor made on a fixed
    device (device="cpu") then meets tensors on another device, also on a CPU-only machine."""
    module = gqa.build(GQA)
    x = inputs(GQA, 2, 5, seed=0)
    gqa.run(module, GQA, x, None, describe(GQA, 2, 5))  # runs where it was built
    module, x = module.to("meta"), x.to("meta")
    past = tuple(t.to("meta") for t in random_past(GQA, 2, 5, seed=0))
    for part, given in ((x, None), (x[:, :1], past)):
        t_past = None if given is None else 5
        what = f"{describe(GQA, 2, part.shape[1], t_past)}, module and input on meta"
        result = gqa.call(module, part, given, what, strict=False)
        # None: the forward reads values, which meta tensors lack; shapes are checked later
        out, cache = result if isinstance(result, (tuple, list)) else (None, None)
        keys, values = cache if isinstance(cache, (tuple, list)) else (None, None)
        for name, t in (("out", out), ("keys", keys), ("values", values)):
            assert not isinstance(t, torch.Tensor) or t.device == part.device, (
                f"device: the returned {name} is on {t.device}, the input on {part.device} "
                f"({what}): keep every tensor on the input's device"
            )


def forms(gqa: Harness) -> Iterator[tuple[Any, torch.Tensor, KV | None, str]]:
    """(result, input, past, description) of forwards with and without a given cache, in
    float64 and float32; the results unchecked."""
    for dtype in (torch.float64, torch.float32):
        module = gqa.build(GQA, dtype=dtype)
        x = inputs(GQA, 3, 4, seed=1, dtype=dtype)
        keys, values = (t.to(dtype) for t in random_past(GQA, 3, 4, seed=1))
        for part, past, what in (
            (x, None, describe(GQA, 3, 4)),
            (x[:, :2], (keys, values), describe(GQA, 3, 2, 4)),
        ):
            yield gqa.call(module, part, past, what), part, past, f"{what}, {dtype}"


def test_output_shape_and_dtype(gqa: Harness) -> None:
    """out is [B, T, d_model] in the input's dtype, with and without a cache."""
    for result, x, _, what in forms(gqa):
        check_output(result, GQA, x, what)


def test_returned_cache_is_past_then_new(gqa: Harness) -> None:
    """The returned cache is [B, n_kv_heads, T_past + T, head_dim]: the given past followed
    by the new positions, with and without a cache."""
    for result, x, past, what in forms(gqa):
        keys, values = check_cache(result, GQA, x, past, what)
        if past is None:
            continue
        n = past[0].shape[2]
        for name, got, given in (("keys", keys, past[0]), ("values", values, past[1])):
            assert torch.equal(got[:, :, :n].cpu(), given.cpu()), (
                f"returned KV cache ({what}): its first T_past = {n} {name} are not the "
                f"given past_kv {name}; return the past followed by the new positions "
                "(torch.cat((past, new), dim=2))"
            )


# ---------------------------------------------------------------- values


CASES = [
    (MHA, 2, 7),
    (MHA, 1, 1),
    (GQA, 2, 9),
    (GQA, 3, 1),
    (MQA, 2, 6),
    (MQA, 1, 13),
    (GQA_BIAS, 3, 5),
    (Config(32, 4, 2), 2, 16),
]


@pytest.mark.parametrize(("cfg", "B", "T"), CASES, ids=[f"{c.tag}-B{b}-T{t}" for c, b, t in CASES])
def test_matches_reference(gqa: Harness, device: str, cfg: Config, B: int, T: int) -> None:
    module = gqa.build(cfg, seed=B * 31 + T, device=device)
    x = inputs(cfg, B, T, seed=T, device=device)
    out, _ = gqa.run(module, cfg, x, None, describe(cfg, B, T))
    w = weights_of(module, cfg.n_heads, cfg.n_kv_heads)
    compare(out, w, x.cpu(), None, cfg, describe(cfg, B, T) + ", float64", F64)


@pytest.mark.parametrize("cfg", [GQA, MQA], ids=lambda c: c.tag)
def test_causality(gqa: Harness, device: str, cfg: Config) -> None:
    """Changing token t must leave every output before t exactly as it was."""
    B, T = 2, 12
    module = gqa.build(cfg, seed=3, device=device)
    x = inputs(cfg, B, T, seed=3, device=device)
    base, _ = gqa.run(module, cfg, x, None, describe(cfg, B, T))
    gen = torch.Generator().manual_seed(4)
    for t in (0, 5, 11):
        changed = x.clone()
        changed[:, t] += 3.0 * torch.randn(B, cfg.d_model, generator=gen, dtype=x.dtype).to(device)
        out, _ = gqa.run(module, cfg, changed, None, describe(cfg, B, T))
        if t > 0:
            err, (b, s, _) = worst(out[:, :t], base[:, :t].cpu().double())
            assert err <= F64, (
                f"causality: changing token {t} changed the output at earlier position {s} "
                f"(batch {b}) by {err:.3g} ({describe(cfg, B, T)}); a query may only attend to "
                "keys at positions <= its own: mask the scores with -inf before the softmax"
            )
        moved = float((out[:, t] - base[:, t]).detach().abs().max())
        assert moved > 1e-6, (
            f"causality: changing token {t} did not change the output at position {t} "
            f"({describe(cfg, B, T)}): a query must attend to its own key"
        )


# ---------------------------------------------------------------- KV cache


GIVEN = [(GQA, 4, 3), (GQA, 6, 1), (MQA, 5, 2), (MHA, 3, 4), (GQA_BIAS, 7, 1)]


@pytest.mark.parametrize(
    ("cfg", "T_past", "T"),
    GIVEN,
    ids=[f"{c.tag}-past{p}-T{t}" for c, p, t in GIVEN],
)
def test_given_cache_matches_reference(
    gqa: Harness, device: str, cfg: Config, T_past: int, T: int
) -> None:
    """A cache of earlier positions in [B, n_kv_heads, T_past, head_dim] layout: the new
    queries sit at T_past .. T_past + T - 1 and see every cached position."""
    B = 2
    what = describe(cfg, B, T, T_past)
    module = gqa.build(cfg, seed=T_past, device=device)
    past = random_past(cfg, B, T_past, seed=50 + T_past)
    x = inputs(cfg, B, T, seed=7 + T, device=device)
    out, (keys, values) = gqa.run(module, cfg, x, tuple(p.to(device) for p in past), what)
    w = weights_of(module, cfg.n_heads, cfg.n_kv_heads)
    compare(out, w, x.cpu(), past, cfg, what + ", float64", F64, lead="KV cache: ")
    k_new, v_new = new_kv(w, x.cpu())
    for name, got, want in (
        ("keys", keys, torch.cat([past[0], k_new], 2)),
        ("values", values, torch.cat([past[1], v_new], 2)),
    ):
        err, (b, j, s, _) = worst(got, want)
        assert err <= F64, (
            f"KV cache: returned {name} are wrong at batch {b}, KV head {j}, position {s} "
            f"(|diff| {err:.3g}; {what}): return the past {name} followed by the new ones, "
            f"KV head j being columns j*head_dim .. (j+1)*head_dim of {name[0]}_proj's output"
        )


def decode(
    gqa: Harness, module: torch.nn.Module, cfg: Config, x: torch.Tensor, chunks: list[int]
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """Feed ``x`` in chunks, each with the cache returned by the previous call."""
    outs, cache, start = [], None, 0
    for size in chunks:
        what = f"{describe(cfg, x.shape[0], size, start)}, decoding in chunks {chunks}"
        out, cache = gqa.run(module, cfg, x[:, start : start + size], cache, what)
        outs.append(out)
        start += size
    assert cache is not None
    return torch.cat(outs, dim=1), cache


DECODES = [
    (GQA, [1] * 8),
    (MQA, [1] * 6),
    (MHA, [1] * 5),
    (GQA, [5, 1, 3]),
    (GQA_BIAS, [2, 4, 1, 3]),
    (MQA, [4, 4]),
]


@pytest.mark.parametrize(
    ("cfg", "chunks"), DECODES, ids=[f"{c.tag}-{'+'.join(map(str, k))}" for c, k in DECODES]
)
def test_decode_with_cache_matches_full_forward(
    gqa: Harness, device: str, cfg: Config, chunks: list[int]
) -> None:
    """Running the sequence piece by piece with the returned caches gives one full forward."""
    B, T = 2, sum(chunks)
    module = gqa.build(cfg, seed=T, device=device)
    x = inputs(cfg, B, T, seed=20 + len(chunks), device=device)
    full, (keys, values) = gqa.run(module, cfg, x, None, describe(cfg, B, T))
    steps, (k_dec, v_dec) = decode(gqa, module, cfg, x, chunks)
    how = "one token at a time" if set(chunks) == {1} else f"in chunks {chunks}"
    err, (b, t, _) = worst(steps, full.cpu().double())
    if err > F64:
        at = 0
        for size in chunks:  # the chunk holding position t, for the message
            if at + size > t:
                break
            at += size
        pytest.fail(
            f"KV cache: decoding {how} differs from one full forward at position {t} (batch "
            f"{b}, |diff| {err:.3g}; {cfg}, the chunk there had T_past={at}); new query i "
            "sits at position T_past + i and sees all cached keys and new keys up to its own",
            pytrace=False,
        )
    for name, got, want in (("keys", k_dec, keys), ("values", v_dec, values)):
        err, _ = worst(got, want.cpu().double())
        assert err <= F64, (
            f"KV cache: the {name} cached after decoding {how} differ from those of one full "
            f"forward by {err:.3g} ({cfg})"
        )


# ---------------------------------------------------------------- gradients and float32


def test_gradients_match_reference(gqa: Harness, device: str) -> None:
    """The module trains: gradients reach every projection and the input, as in the reference."""
    cfg, B, T = GQA_BIAS, 2, 6
    module = gqa.build(cfg, seed=9, device=device)
    x = inputs(cfg, B, T, seed=9, device=device).requires_grad_(True)
    out, _ = gqa.run(module, cfg, x, None, describe(cfg, B, T))
    probe = torch.randn(out.shape, generator=torch.Generator().manual_seed(9), dtype=out.dtype)
    (out * probe.to(device)).sum().backward()
    w = weights_of(module, cfg.n_heads, cfg.n_kv_heads, grad=True)
    x_ref = x.detach().cpu().requires_grad_(True)
    want, _ = attention(w, x_ref)
    (want * probe).sum().backward()
    checked = [("input x", x)] + [
        (f"{name}.{kind}", getattr(getattr(module, name), kind))
        for name in PROJECTIONS
        for kind in ("weight", "bias")
        if getattr(getattr(module, name), kind) is not None
    ]
    for (name, param), leaf in zip(checked, [x_ref, *w.leaves()], strict=True):
        if param.grad is None:
            pytest.fail(
                f"backward: no gradient reached {name} ({describe(cfg, B, T)}): do not "
                "detach tensors or build the output outside autograd",
                pytrace=False,
            )
        err, _ = worst(param.grad, leaf.grad)
        assert err <= 1e-8, (
            f"backward: the gradient of {name} differs from the reference by {err:.3g} "
            f"({describe(cfg, B, T)})"
        )


def test_float32_on_device(gqa: Harness, device: str) -> None:
    """float32 on the grading device, with and without a cache, against float64 maths."""
    cfg, B, T = GQA, 2, 24
    module = gqa.build(cfg, seed=11, dtype=torch.float32, device=device)
    x = inputs(cfg, B, T, seed=11, device=device, dtype=torch.float32)
    w = weights_of(module, cfg.n_heads, cfg.n_kv_heads)
    what = f"{describe(cfg, B, T)}, float32 on {device}"
    out, cache = gqa.run(module, cfg, x[:, :20], None, what)
    compare(out, w, x[:, :20].cpu(), None, cfg, what, F32)
    out, _ = gqa.run(module, cfg, x[:, 20:], cache, what + ", T_past=20")
    past = tuple(t.cpu().double() for t in cache)
    compare(out, w, x[:, 20:].cpu(), past, cfg, what + ", T_past=20", F32, lead="KV cache: ")


# ---------------------------------------------------------------- GPU


@pytest.mark.cuda
@pytest.mark.parametrize(
    ("dtype", "atol"), [(torch.float32, 1e-3), (torch.bfloat16, 6e-2)], ids=["float32", "bfloat16"]
)
def test_larger_layer_on_gpu(gqa: Harness, device: str, dtype: torch.dtype, atol: float) -> None:
    """d_model 1024, 16 query heads, 4 KV heads, T = 256 prefill then one decode step, on the
    GPU, against float64 maths on the CPU."""
    cfg, B, T = Config(1024, 16, 4), 4, 256
    module = gqa.build(cfg, seed=12, dtype=dtype, device=device)
    x = inputs(cfg, B, T + 1, seed=12, device=device, dtype=dtype)
    w = weights_of(module, cfg.n_heads, cfg.n_kv_heads)
    what = f"{describe(cfg, B, T)}, {dtype} on {device}"
    out, cache = gqa.run(module, cfg, x[:, :T], None, what)
    compare(out, w, x[:, :T].cpu(), None, cfg, what, atol)
    out, _ = gqa.run(module, cfg, x[:, T:], cache, what + f", T_past={T}")
    past = tuple(t.cpu().double() for t in cache)
    compare(out, w, x[:, T:].cpu(), past, cfg, what + f", T_past={T}", atol, lead="KV cache: ")
