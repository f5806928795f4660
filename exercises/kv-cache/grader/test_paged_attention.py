"""Grader for paged_attention_decode: gathers K/V through block tables, matches dense attention."""

from __future__ import annotations

from typing import Any

import pytest
import torch

CASES = {
    # name: (batch, heads, kv_heads, head_dim, block_size, seq_lens)
    "one-token": (1, 2, 2, 8, 4, [1]),
    "block-multiple": (2, 4, 4, 16, 4, [8, 16]),
    "ragged": (3, 4, 4, 16, 8, [5, 17, 33]),
    "gqa": (2, 8, 2, 32, 16, [40, 3]),
}


def make_case(name: str, device: str, dtype: torch.dtype, seed: int = 0) -> dict[str, Any]:
    batch, heads, kv_heads, dim, bs, lens = CASES[name]
    gen = torch.Generator().manual_seed(seed)
    max_blocks = max(-(-n // bs) for n in lens)
    num_blocks = sum(-(-n // bs) for n in lens) + 3
    # garbage everywhere: every slot not covered by a sequence must not affect the result
    k_cache = torch.full((num_blocks, bs, kv_heads, dim), 1e3)
    v_cache = torch.full((num_blocks, bs, kv_heads, dim), -1e3)
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
    }


def dense(case: dict[str, Any]) -> torch.Tensor:
    out = []
    for b, (k, v) in enumerate(zip(case["keys"], case["values"], strict=True)):
        k = k.double().repeat_interleave(case["group"], dim=1)  # [T, H, D]
        v = v.double().repeat_interleave(case["group"], dim=1)
        q = case["q64"][b]  # [H, D]
        scores = torch.einsum("hd,thd->ht", q, k) / q.shape[-1] ** 0.5
        out.append(torch.einsum("ht,thd->hd", scores.softmax(-1), v))
    return torch.stack(out)


def run(solution: Any, case: dict[str, Any]) -> torch.Tensor:
    fn = getattr(solution, "paged_attention_decode", None)
    assert callable(fn), "define paged_attention_decode(q, k_cache, v_cache, block_tables, ...)"
    out = fn(case["q"], case["k_cache"], case["v_cache"], case["block_tables"], case["seq_lens"])
    assert out.shape == case["q"].shape, f"output shape {tuple(out.shape)}, expected q's shape"
    return out


def compare(out: torch.Tensor, want: torch.Tensor, name: str, atol: float) -> None:
    err = (out.double().cpu() - want).abs()
    worst = err.max().item()
    if not worst <= atol:  # also catches NaN
        b, h, _ = (err == err.max()).nonzero()[0].tolist() if worst == worst else (0, 0, 0)
        pytest.fail(
            f"{name}: max |paged - dense attention| = {worst:.3g} > {atol:g} (sequence {b}, "
            f"head {h}); gather K/V through the block table and mask positions >= seq_len",
            pytrace=False,
        )


@pytest.mark.parametrize("name", list(CASES))
def test_matches_dense_attention(solution: Any, device: str, name: str) -> None:
    case = make_case(name, device, torch.float32)
    compare(run(solution, case), dense(case), name, atol=1e-4)


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["ragged", "gqa"])
def test_matches_dense_attention_fp16_cuda(solution: Any, device: str, name: str) -> None:
    case = make_case(name, device, torch.float16)
    compare(run(solution, case), dense(case), f"{name} fp16", atol=5e-3)
