"""Behaviour tests for the softmax, attention and FlashAttention answers (smx, fa, attn
topics): each against PyTorch's own operator or autograd, on sizes that do not divide the
block sizes, on one row, on large magnitudes and on -inf / NaN entries."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tests.bank_code.blocks import load_block
from tests.bank_code.numerics import INF, close


def test_stable_softmax() -> None:
    softmax = load_block("smx-softmax-numerical-stability", 1)["softmax"]
    torch.manual_seed(0)
    for x in (torch.randn(3, 7), torch.randn(1, 1), torch.randn(0, 5), torch.randn(2, 3, 4) * 1e4):
        close(softmax(x), torch.softmax(x, -1))
    x = torch.tensor([[-INF, 0.0, 1.0], [-INF, -INF, -INF], [1.0, math.nan, 0.0], [-1e30, 0, 1e30]])
    want = torch.softmax(x, -1)
    want[1] = 0.0  # the answer's guard: a fully masked row gives zeros, not NaN
    close(softmax(x), want)
    half = torch.tensor([[20.0, 10.0, -INF]], dtype=torch.float16)  # exp(20) overflows FP16
    got = softmax(half)
    assert got.dtype == torch.float16
    close(got.float(), torch.softmax(half.float(), -1), 1e-3)


def test_online_softmax_in_pure_python() -> None:
    online = load_block("smx-code-online-softmax-flashattention", 0)["online_softmax"]
    rows = [
        [],
        [3.0],
        [1.0, 2.0, 3.0],
        [-INF, 1.0, 2.0],  # starts with -inf
        [-INF, -INF],  # fully masked
        [1000.0, -1000.0, 999.0],
        [1.0, math.nan, 2.0],
    ]
    for row in rows:
        got = online(row)
        if row and all(v == -INF for v in row):
            assert got == [0.0] * len(row)
        elif row:
            close(
                torch.tensor(got, dtype=torch.float64),
                torch.softmax(torch.tensor(row, dtype=torch.float64), 0),
            )
        else:
            assert got == []


@pytest.mark.parametrize(("n", "bc"), [(1, 4), (7, 4), (8, 4), (13, 16), (0, 4)])
def test_online_softmax_attention_block_loop(n: int, bc: int) -> None:
    rng = np.random.default_rng(n)
    br, d = 5, 3
    qi, k, v = rng.normal(size=(br, d)) * 4, rng.normal(size=(n, d)) * 4, rng.normal(size=(n, d))
    scale = d**-0.5
    tiles = {"Br": br, "Bc": bc, "d": d, "N": n}
    ns = load_block(
        "smx-code-online-softmax-flashattention", 1, Qi=qi, K=k, V=v, scale=scale, **tiles
    )
    if n == 0:
        assert np.all(ns["O"] == 0) and np.all(ns["lse"] == -np.inf)
        return
    s = qi @ k.T * scale
    p = np.exp(s - s.max(1, keepdims=True))
    np.testing.assert_allclose(ns["O"], (p / p.sum(1, keepdims=True)) @ v, rtol=1e-10)
    np.testing.assert_allclose(ns["lse"], np.log(np.exp(s).sum(1)), rtol=1e-10)


def test_softmax_backward_matches_autograd() -> None:
    backward = load_block("smx-softmax-backward-derivation", 2)["softmax_backward"]
    torch.manual_seed(0)
    for shape in ((1, 1), (4, 9), (2, 3, 5)):
        x = (torch.randn(shape, dtype=torch.float64) * 10).requires_grad_()
        y = torch.softmax(x, -1)
        dy = torch.randn(shape, dtype=torch.float64)
        (want,) = torch.autograd.grad(y, x, dy)
        close(backward(y.detach(), dy), want, 1e-10)


def _attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False
) -> torch.Tensor:
    return F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal)[0]


@pytest.mark.parametrize(("n", "br", "bc"), [(1, 64, 64), (100, 64, 64), (64, 16, 32), (37, 8, 5)])
def test_flash_attention_v1_forward(n: int, br: int, bc: int) -> None:
    flash = load_block("fa-code-flashattention-v1-approach", 0)["flash_attn_v1"]
    torch.manual_seed(n)
    q, k, v = (torch.randn(n, 16) for _ in range(3))  # FP32: the answer keeps m, l in FP32
    close(flash(q, k, v, Br=br, Bc=bc), _attention(q, k, v))
    close(flash(q * 300, k, v, Br=br, Bc=bc), _attention(q * 300, k, v), 1e-4)  # large logits


def _reference_grads(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, do: torch.Tensor, scale: float, causal: bool
) -> tuple[torch.Tensor, ...]:
    q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
    s = q @ k.T * scale
    if causal:
        s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), -INF)
    o = torch.softmax(s, -1) @ v
    return (o.detach(), torch.logsumexp(s, -1).detach(), *torch.autograd.grad(o, (q, k, v), do))


def test_attention_backward_equations() -> None:
    attn_bwd = load_block("fa-attention-backward-equations", 1)["attn_bwd"]
    torch.manual_seed(0)
    for n, m in ((1, 1), (5, 9), (16, 3)):
        q, do = torch.randn(n, 8, dtype=torch.float64), torch.randn(n, 8, dtype=torch.float64)
        k, v = torch.randn(m, 8, dtype=torch.float64), torch.randn(m, 8, dtype=torch.float64)
        o, lse, *want = _reference_grads(q, k, v, do, 8**-0.5, causal=False)
        for got, expected in zip(attn_bwd(q, k, v, o, lse, do, 8**-0.5), want, strict=True):
            close(got, expected, 1e-10)


@pytest.mark.parametrize(
    ("causal", "n", "m", "br", "bc"),
    [
        (causal, *sizes)
        for causal in (False, True)
        for sizes in ((1, 1, 64, 64), (70, 70, 16, 32), (33, 33, 8, 5))
    ]
    + [(False, 9, 20, 4, 6), (False, 20, 9, 6, 4)],  # the causal mask of the answer is square
)
def test_flash_attention_backward(causal: bool, n: int, m: int, br: int, bc: int) -> None:
    flash_bwd = load_block("fa-code-attention-backward", 0)["flash_bwd"]
    torch.manual_seed(n + m)
    q, do = torch.randn(n, 8, dtype=torch.float64), torch.randn(n, 8, dtype=torch.float64)
    k, v = torch.randn(m, 8, dtype=torch.float64), torch.randn(m, 8, dtype=torch.float64)
    o, lse, *want = _reference_grads(q, k, v, do, 0.3, causal)
    got = flash_bwd(q, k, v, o, lse, do, 0.3, Br=br, Bc=bc, causal=causal)
    for g, w in zip(got, want, strict=True):
        close(g, w, 1e-10)


def test_rope_rotates_pairs_and_keeps_relative_positions() -> None:
    rope = load_block("attn-rope-principle", 0)["rope"]
    torch.manual_seed(0)
    x = torch.randn(2, 6, 8, dtype=torch.float64)
    pos = torch.arange(6)
    y = rope(x, pos)
    close(y.norm(dim=-1), x.norm(dim=-1), 1e-6)  # a rotation (angles in FP32)
    close(rope(x, torch.zeros(6, dtype=torch.long)), x)  # position 0: identity
    inv = 10000.0 ** (-torch.arange(0, 8, 2, dtype=torch.float64) / 8)
    z = torch.complex(x[..., :4], x[..., 4:]) * torch.polar(
        torch.ones(6, 4, dtype=torch.float64), pos[:, None] * inv
    )
    close(y, torch.cat([z.real, z.imag], -1), 1e-6)
    q, k = torch.randn(8, dtype=torch.float64), torch.randn(8, dtype=torch.float64)
    dots = [
        rope(q[None], torch.tensor([a]))[0] @ rope(k[None], torch.tensor([b]))[0]
        for a, b in ((3, 1), (10, 8), (1002, 1000))
    ]
    close(torch.stack(dots), dots[0].expand(3), 1e-4)  # only the offset matters


def _mha_reference(
    x: torch.Tensor, qkv: torch.Tensor, out: torch.Tensor, h: int, mask: torch.Tensor | None
) -> torch.Tensor:
    b, n, d = x.shape
    q, k, v = (x @ qkv.T).view(b, n, 3, h, d // h).permute(2, 0, 3, 1, 4)
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return o.transpose(1, 2).reshape(b, n, d) @ out.T


def test_multi_head_attention_module() -> None:
    mha = load_block("attn-code-mha-approach", 0)["MHA"]
    torch.manual_seed(0)
    for n in (1, 5):
        m = mha(12, 3).double()
        x = torch.randn(2, n, 12, dtype=torch.float64)
        mask = torch.ones(n, n, dtype=torch.bool).tril()
        for given in (None, mask):
            want = _mha_reference(x, m.qkv.weight, m.out.weight, 3, given)
            close(m(x, given), want, 1e-10)


def test_grouped_query_attention_module() -> None:
    gqa = load_block("attn-code-gqa-approach", 0)["GQA"]
    torch.manual_seed(0)
    for h, hkv, n in ((4, 2, 5), (4, 4, 3), (6, 1, 1)):
        m = gqa(24, h, hkv).double()
        x = torch.randn(2, n, 24, dtype=torch.float64)
        d = 24 // h
        q = (x @ m.wq.weight.T).view(2, n, h, d).transpose(1, 2)
        k, v = (x @ m.wkv.weight.T).view(2, n, 2, hkv, d).permute(2, 0, 3, 1, 4)
        k, v = (t.repeat_interleave(h // hkv, dim=1) for t in (k, v))  # query head i uses i // g
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        want = o.transpose(1, 2).reshape(2, n, -1) @ m.wo.weight.T
        close(m(x), want, 1e-10)
