"""Behaviour tests for the model-building answers (arch, pt, rl, inf, fuse topics): norms,
losses and their backward passes against autograd, modules against a plain reference."""

from __future__ import annotations

import types

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tests.bank_code.blocks import load_block
from tests.bank_code.numerics import INF, close


def test_rmsnorm_forward() -> None:
    rmsnorm = load_block("arch-rmsnorm-vs-layernorm-prenorm", 0)["rmsnorm"]
    torch.manual_seed(0)
    for x in (torch.randn(3, 8), torch.zeros(2, 4), torch.randn(1, 1) * 1e4, torch.randn(0, 5)):
        w = torch.randn(x.shape[-1])
        close(rmsnorm(x, w), F.rms_norm(x, (x.shape[-1],), w, eps=1e-6))
    x = torch.randn(4, 64, dtype=torch.bfloat16) * 300  # x² overflows nothing in FP32
    w = torch.ones(64, dtype=torch.bfloat16)
    want = F.rms_norm(x.float(), (64,), eps=1e-6)
    close(rmsnorm(x, w).float(), want, 2e-2)


def test_flow_matching_sampler_reaches_the_target_with_exact_velocity() -> None:
    sample = load_block("arch-code-flow-matching-sampler", 0)["sample"]
    torch.manual_seed(0)
    target = torch.randn(2, 3, 4)

    def model(x: torch.Tensor, t: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        v = (x.float() - torch.cat([target, target])) / t[:, None, None]  # straight paths
        return (v * c[:, None, None]).to(x.dtype)  # the unconditional branch predicts 0

    vae = types.SimpleNamespace(decode=lambda x: x.float())
    cond, uncond = torch.ones(2), torch.zeros(2)
    for steps, shift in ((1, 1.0), (30, 3.0), (7, 1.0)):
        out = sample(model, vae, cond, uncond, target.shape, steps=steps, cfg=1.0, shift=shift)
        close(out, target, 0.05)  # exact velocity: the target, up to BF16 rounding
    torch.manual_seed(1)
    noise = torch.randn(target.shape, dtype=torch.bfloat16).float()
    torch.manual_seed(1)
    out = sample(model, vae, cond, uncond, target.shape, steps=1, cfg=2.0, shift=1.0)
    close(out, noise - 2.0 * (noise - target), 0.05)  # one step with twice the velocity


def test_transformer_block_against_a_plain_reference() -> None:
    ns = load_block("arch-code-transformer-block", 0)
    torch.manual_seed(0)
    d, h, t = 16, 2, 5
    block = ns["Block"](d, h, 24).double()
    cos, sin = ns["rope_cache"](t, d // h)
    x = torch.randn(2, t, d, dtype=torch.float64)
    y = block(x, cos.double(), sin.double())
    # the half-split rotation of the card is a complex multiplication by e^(i·pos·inv)
    rope = load_block("attn-rope-principle", 0)["rope"]
    n1 = F.rms_norm(x, (d,), block.n1.weight, eps=1e-5)
    q, k, v = (n1 @ block.qkv.weight.T).view(2, t, 3, h, d // h).unbind(2)
    q, k, v = (z.transpose(1, 2) for z in (q, k, v))
    q, k = rope(q, torch.arange(t)), rope(k, torch.arange(t))
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(2, t, d)
    x2 = x + a @ block.o.weight.T
    g, u = (F.rms_norm(x2, (d,), block.n2.weight, eps=1e-5) @ block.gate_up.weight.T).chunk(2, -1)
    close(y, x2 + (F.silu(g) * u) @ block.down.weight.T, 1e-6)
    x_future = x.clone()
    x_future[:, -1] += 1.0  # causal: earlier positions ignore a later token
    close(block(x_future, cos.double(), sin.double())[:, :-1], y[:, :-1], 1e-10)


@pytest.mark.parametrize(("eps", "chunk"), [(0.0, 4096), (0.1, 3), (0.0, 1)])
def test_fused_cross_entropy_matches_autograd(eps: float, chunk: int) -> None:
    fused_ce = load_block("arch-softmax-cross-entropy-backward", 0)["fused_ce"]
    torch.manual_seed(0)
    logits = torch.randn(7, 11) * 20
    target = torch.tensor([0, 3, -100, 10, 5, -100, 2])
    ref = logits.clone().requires_grad_()
    want = F.cross_entropy(ref, target, ignore_index=-100, label_smoothing=eps)
    want.backward()
    loss, grad = fused_ce(logits, target, eps=eps, chunk=chunk)
    close(loss, want.detach())
    close(grad, ref.grad)
    loss, grad = fused_ce(logits, torch.full((7,), -100), eps=eps, chunk=chunk)
    assert loss.item() == 0.0 and not grad.any()  # every target ignored: 0, not NaN


def test_norm_backward_passes_match_autograd() -> None:
    ns = load_block("arch-layernorm-rmsnorm-backward", 0)
    torch.manual_seed(0)
    for shape in ((1, 1), (3, 8), (2, 3, 5)):
        x = (torch.randn(shape, dtype=torch.float64) * 5).requires_grad_()
        w = torch.randn(shape[-1], dtype=torch.float64, requires_grad=True)
        b = torch.randn(shape[-1], dtype=torch.float64, requires_grad=True)
        g = torch.randn(shape, dtype=torch.float64)
        y = F.rms_norm(x, (shape[-1],), w, eps=1e-5)
        want = torch.autograd.grad(y, (x, w), g)
        for got, exp in zip(ns["rmsnorm_bwd"](x.detach(), w.detach(), g), want, strict=True):
            close(got.double(), exp, 1e-5)
        y = F.layer_norm(x, (shape[-1],), w, b, eps=1e-5)
        want = torch.autograd.grad(y, (x, w, b), g)
        for got, exp in zip(ns["layernorm_bwd"](x.detach(), w.detach(), g), want, strict=True):
            close(got.double(), exp, 1e-5)


def test_linear_backward_matches_autograd() -> None:
    linear_bwd = load_block("arch-linear-layer-backward-flops", 0)["linear_bwd"]
    torch.manual_seed(0)
    for lead in ((1,), (5,), (2, 3)):
        x = torch.randn(*lead, 4, dtype=torch.float64, requires_grad=True)
        w = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
        b = torch.randn(6, dtype=torch.float64, requires_grad=True)
        dy = torch.randn(*lead, 6, dtype=torch.float64)
        want = torch.autograd.grad(F.linear(x, w, b), (x, w, b), dy)
        for got, exp in zip(linear_bwd(x.detach(), w.detach(), dy), want, strict=True):
            close(got, exp, 1e-12)


def test_custom_silu_function() -> None:
    silu = load_block("pt-custom-autograd-function", 0)["SiLU"]
    x = torch.tensor([-30.0, -1.0, 0.0, 2.0, 30.0], requires_grad=True)
    y = silu.apply(x)
    y.sum().backward()
    ref = x.detach().clone().requires_grad_()
    F.silu(ref).sum().backward()
    close(y.detach(), F.silu(ref).detach())
    close(x.grad, ref.grad)
    with torch.no_grad():
        close(silu.apply(x), F.silu(x))


def test_sft_loss_masks_prompt_and_padding() -> None:
    sft_loss = load_block("rl-code-sft-loss-label-shift", 0)["sft_loss"]
    torch.manual_seed(0)
    table = torch.randn(10, 10)

    def forward(ids: torch.Tensor, attention_mask: torch.Tensor) -> types.SimpleNamespace:
        return types.SimpleNamespace(logits=table[ids])

    ids = torch.tensor([[1, 2, 3, 4, 0], [5, 6, 7, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0]])
    prompt = torch.tensor([2, 1])
    # scored targets: row 0 positions 2, 3 (tokens 3, 4); row 1 positions 1, 2 (tokens 6, 7)
    pairs = [(2, 3), (3, 4), (5, 6), (6, 7)]
    want = torch.stack([F.cross_entropy(table[a], torch.tensor(b)) for a, b in pairs]).mean()
    close(sft_loss(forward, ids, mask, prompt), want)
    everything_prompt = torch.tensor([5, 5])
    assert sft_loss(forward, ids, mask, everything_prompt).item() == 0.0  # no NaN


def test_dpo_loss() -> None:
    dpo_loss = load_block("rl-dpo-objective", 0)["dpo_loss"]
    pc, pr = torch.tensor([-5.0, -300.0, 0.0]), torch.tensor([-7.0, -1.0, 0.0])
    rc, rr = torch.tensor([-6.0, -200.0, 0.0]), torch.tensor([-6.0, -2.0, 0.0])
    logits = 0.1 * ((pc - rc) - (pr - rr))
    close(dpo_loss(pc, pr, rc, rr), torch.log1p(torch.exp(-logits)).mean())
    assert torch.isfinite(dpo_loss(pc * 1e4, pr, rc, rr))  # large margins stay finite
    close(dpo_loss(pc, pr, pc, pr), torch.tensor(0.6931471805599453))  # policy == reference


def test_lora_adapter() -> None:
    ns = load_block("rl-code-lora-adapter", 0)
    torch.manual_seed(0)
    base = nn.Linear(8, 6)
    lora = ns["LoRALinear"](base, r=2, alpha=4, p=0.0)
    x = torch.randn(3, 8)
    close(lora(x), base(x))  # B starts at zero
    with torch.no_grad():
        lora.B.normal_()
    before = lora(x)
    close(before, F.linear(x, base.weight, base.bias) + x @ lora.A.T @ lora.B.T * 2.0)
    lora.merge()
    lora.merge()  # merging twice must not add the update twice
    close(lora(x), before)

    class Attn(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q_proj, self.up = nn.Linear(4, 4), nn.Linear(4, 4)
            self.Bnorm = nn.LayerNorm(4)

    model = nn.Sequential(Attn())
    ns["inject"](model, r=2)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable == {"0.q_proj.A", "0.q_proj.B"}


def test_sampling_temperature_top_k_top_p() -> None:
    sample = load_block("inf-sampling-temperature-topk-topp", 0)["sample"]
    torch.manual_seed(0)
    logits = torch.tensor([[2.0, 1.0, 0.5, -1.0, -INF], [0.0, 0.0, 0.0, 0.0, 0.0]])
    assert sample(logits, T=0).tolist() == [[0], [0]]
    for _ in range(200):
        assert sample(logits, T=1.0, k=1, p=1.0)[0].item() == 0  # top-1 is greedy
        token = sample(logits, T=1.0, k=2, p=1.0)[0].item()
        assert token in (0, 1)
        assert sample(logits, T=0.5, k=0, p=1e-6)[0].item() == 0  # tiny p keeps the top token
        assert sample(logits, T=1.0, k=0, p=1.0)[0].item() != 4  # -inf is never drawn
    probs = torch.softmax(logits[0], -1)
    keep = 2  # p = 0.8: the top two carry ~0.79 < 0.8, so the third joins
    p = float(probs[:keep].sum()) + 1e-3
    draws = torch.stack([sample(logits, T=1.0, k=0, p=p)[0] for _ in range(500)]).flatten()
    assert set(draws.tolist()) == {0, 1, 2}
    assert sample(logits, T=1.0, k=50, p=0.9).shape == (2, 1)  # k above the vocabulary


def test_kv_cache_decode_matches_full_attention() -> None:
    torch.manual_seed(0)
    b, h, t, hd = 2, 2, 6, 4
    wq, wk, wv = (torch.randn(8, h * hd, dtype=torch.float64) for _ in range(3))

    def qkv(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(
            (x @ w).view(x.shape[0], x.shape[1], h, hd).transpose(1, 2) for w in (wq, wk, wv)
        )

    def rope(x: torch.Tensor, pos: int) -> torch.Tensor:
        return x * (1.0 + pos)  # any position-dependent map will do for the check

    def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v)

    decode_step = load_block("inf-kv-cache-basics", 0, rope=rope, attend=attend)["decode_step"]
    layer = types.SimpleNamespace(qkv=qkv)
    cache = types.SimpleNamespace(
        k=torch.zeros(b, h, 16, hd, dtype=torch.float64),
        v=torch.zeros(b, h, 16, hd, dtype=torch.float64),
    )
    x = torch.randn(b, t, 8, dtype=torch.float64)
    q, k, v = qkv(x)
    scale = torch.arange(1.0, t + 1, dtype=torch.float64)[None, None, :, None]
    want = F.scaled_dot_product_attention(q * scale, k * scale, v, is_causal=True)
    got = torch.cat([decode_step(x[:, i : i + 1], cache, layer, i) for i in range(t)], dim=2)
    close(got, want, 1e-10)


def test_operator_test_template_passes_a_right_kernel_and_fails_a_wrong_one() -> None:
    rmsnorm = load_block("arch-rmsnorm-vs-layernorm-prenorm", 0)["rmsnorm"]

    def reference(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), w, eps=1e-6)

    def run(kernel: object) -> None:
        ns = load_block(
            "pt-testing-operators-pytest",
            0,
            pytest=pytest,
            rmsnorm_ref=reference,
            my_rmsnorm=kernel,
        )
        for dtype in (torch.float32, torch.float16, torch.bfloat16):
            for shape in ((1, 1), (7, 129), (64, 512), (0, 8)):  # a smaller big case here
                ns["test_rmsnorm"]("cpu", dtype, shape)

    run(rmsnorm)
    with pytest.raises(AssertionError):
        run(lambda x, w: rmsnorm(x, w) * 1.05)  # off by 5%: caught at every precision
