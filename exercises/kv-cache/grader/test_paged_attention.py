"""Grader for paged_attention_decode: gathers K/V through block tables, matches dense attention."""

from __future__ import annotations

from typing import Any

import pytest
import torch

CASES = {
    # name: (batch, heads, kv_heads, head_dim, block_size, seq_lens, scale)
    "one-token": (1, 2, 2, 8, 4, [1], None),
    "block-multiple": (2, 4, 4, 16, 4, [8, 16], None),
    "ragged": (3, 4, 4, 16, 8, [5, 17, 33], None),
    "gqa": (2, 8, 2, 32, 16, [40, 3], None),
    "explicit-scale": (2, 4, 2, 16, 4, [6, 13], 0.37),
    "zero-scale": (2, 2, 2, 8, 4, [5, 9], 0.0),  # a given scale of 0: the mean of V
}
# Garbage in every slot no sequence covers: large enough that an additive mask such as
# -1e4 lets it through (q.k of a garbage key is about 1e6), finite in the dtype.
GARBAGE = {torch.float32: 1e6, torch.float16: 1e3}


def make_case(name: str, device: str, dtype: torch.dtype, seed: int = 0) -> dict[str, Any]:
    batch, heads, kv_heads, dim, bs, lens, scale = CASES[name]
    gen = torch.Generator().manual_seed(seed)
    max_blocks = max(-(-n // bs) for n in lens)
    num_blocks = sum(-(-n // bs) for n in lens) + 3
    # garbage everywhere: every slot not covered by a sequence must not affect the result
    k_cache = torch.full((num_blocks, bs, kv_heads, dim), GARBAGE[dtype])
    v_cache = torch.full((num_blocks, bs, kv_heads, dim), -GARBAGE[dtype])
    order = torch.randperm(num_blocks, generator=gen).tolist()  # scattered, not contiguous
    tables = torch.full((batch, max_blocks), -1, dtype=torch.int32)
    keys, values = [], []
    for b, n in enumerate(lens):
        k = torch.randn(n, kv_heads, dim, generator=gen)
        v = torch.randn(n, kv_heads, dim, generator=gen)
        for i in range(-(-n // bs)):
            block = order.pop()
            tables[b, i] = block
            chunk = slice(i * bs, min(n, (i + 1) * bs))
            k_cache[block, : chunk.stop - chunk.start] = k[chunk]
            v_cache[block, : chunk.stop - chunk.start] = v[chunk]
        keys.append(k)
        values.append(v)
    q = torch.randn(batch, heads, dim, generator=gen)
    to = {"device": device, "dtype": dtype}
    return {
        "q": q.to(**to),
        "k_cache": k_cache.to(**to),
        "v_cache": v_cache.to(**to),
        "block_tables": tables.to(device),
        "seq_lens": torch.tensor(lens, device=device),
        "keys": keys,
        "values": values,
        "q64": q.double(),
        "group": heads // kv_heads,
        "scale": scale,
    }


def dense(
    case: dict[str, Any], mapping: str = "grouped", scale: float | None = None
) -> torch.Tensor:
    """Float64 attention over each sequence's own tokens; query head h reads kv head
    h // group ("grouped", the contract) or h % kv_heads ("interleaved", a known mistake)."""
    out = []
    for b, (k, v) in enumerate(zip(case["keys"], case["values"], strict=True)):
        heads = torch.arange(case["q64"].shape[1])
        kv = {
            "grouped": heads // case["group"],
            "interleaved": heads % k.shape[1],
            "by_kv_heads": (heads // k.shape[1]).clamp(max=k.shape[1] - 1),
        }[mapping]
        k, v = k.double()[:, kv], v.double()[:, kv]  # [T, H, D]
        q = case["q64"][b]  # [H, D]
        s = scale if scale is not None else case["scale"]
        s = q.shape[-1] ** -0.5 if s is None else s
        scores = torch.einsum("hd,thd->ht", q, k) * s
        out.append(torch.einsum("ht,thd->hd", scores.softmax(-1), v))
    return torch.stack(out)


ARGS = ("q", "k_cache", "v_cache", "block_tables", "seq_lens")


def run(solution: Any, case: dict[str, Any]) -> torch.Tensor:
    fn = getattr(solution, "paged_attention_decode", None)
    assert callable(fn), "define paged_attention_decode(q, k_cache, v_cache, block_tables, ...)"
    args = tuple(case[name] for name in ARGS)
    before = [a.clone() for a in args]
    out = fn(*args) if case["scale"] is None else fn(*args, scale=case["scale"])
    for name, old, new in zip(ARGS, before, args, strict=True):
        if not torch.equal(old, new):
            pytest.fail(
                f"paged_attention_decode modified its input {name} in place: compute on new "
                "tensors (q * scale, not q.mul_(scale); for a float32 q, q.float() is q itself)",
                pytrace=False,
            )
    assert out.shape == case["q"].shape, f"output shape {tuple(out.shape)}, expected q's shape"
    return out


def diagnose(out: torch.Tensor, case: dict[str, Any], atol: float) -> str:
    """What the wrong result matches, when it matches a known mistake; else what to check."""
    got = out.double().cpu()
    if not got.isfinite().all() or got.abs().max() > 1e2:  # real values are about N(0, 1)
        return (
            "values of the size of the garbage in unused slots reached the result: slots >= "
            "seq_len must get exactly zero weight (an additive penalty such as -1e4 is not "
            "enough) and their V must not be multiplied in"
        )
    if case["group"] > 1 and (got - dense(case, mapping="interleaved")).abs().max() <= atol:
        return (
            "it matches query head h reading kv head h % H_kv: with grouped-query attention "
            "query head h uses kv head h // (H // H_kv)"
        )
    kv_heads = case["q64"].shape[1] // case["group"]
    by_kv_heads = (got - dense(case, mapping="by_kv_heads")).abs().max() <= atol
    if kv_heads != case["group"] and by_kv_heads:  # h // H_kv differs from h // group
        return (
            "it matches query head h reading kv head h // H_kv: the group size is H // H_kv, "
            "so query head h reads kv head h // (H // H_kv)"
        )
    if case["scale"] is not None:
        default = case["q64"].shape[-1] ** -0.5
        if (got - dense(case, scale=default)).abs().max() <= atol:
            return (
                f"it matches scale 1/sqrt(D): use the scale argument ({case['scale']}) when given"
            )
    return (
        "gather K/V through the block table (token t in block_tables[b, t // block_size], "
        "slot t % block_size), keep slots >= seq_len out of the softmax entirely"
        + (", map query head h to kv head h // (H // H_kv)" if case["group"] > 1 else "")
        + (", apply the given scale" if case["scale"] is not None else "")
    )


def compare(out: torch.Tensor, case: dict[str, Any], name: str, atol: float) -> None:
    """Fail, naming the likely cause, unless ``out`` is within ``atol`` of dense attention."""
    err = (out.double().cpu() - dense(case)).abs()
    worst = err.max().item()
    if not worst <= atol:  # also catches NaN
        b, h, _ = (err == err.max()).nonzero()[0].tolist() if worst == worst else (0, 0, 0)
        pytest.fail(
            f"{name}: max |paged - dense attention| = {worst:.3g} > {atol:g} (sequence {b}, "
            f"head {h}); {diagnose(out, case, atol)}",
            pytrace=False,
        )


@pytest.mark.parametrize("name", list(CASES))
def test_matches_dense_attention(solution: Any, device: str, name: str) -> None:
    case = make_case(name, device, torch.float32)
    compare(run(solution, case), case, name, atol=1e-4)


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["ragged", "gqa"])
def test_matches_dense_attention_fp16_cuda(solution: Any, device: str, name: str) -> None:
    case = make_case(name, device, torch.float16)
    compare(run(solution, case), case, f"{name} fp16", atol=5e-3)
