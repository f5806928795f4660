"""gqa beyond the common meta-tests: the grader's own attention agrees with torch's
scaled_dot_product_attention, and every mistake it diagnoses really differs from it."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from .meta import CATALOG

EXERCISE = CATALOG.get("gqa")

pytestmark = pytest.mark.slow


def _grader_reference() -> ModuleType:
    path = EXERCISE.grader_dir / "gqa_reference.py"
    spec = importlib.util.spec_from_file_location("gqa_grader_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("n_heads", "n_kv_heads", "t_past"), [(4, 4, 0), (8, 2, 0), (8, 2, 5), (8, 1, 3)]
)
def test_grader_reference_agrees_with_sdpa(n_heads: int, n_kv_heads: int, t_past: int) -> None:
    import torch
    import torch.nn.functional as F

    ref = _grader_reference()
    gen = torch.Generator().manual_seed(n_heads + n_kv_heads + t_past)
    d_model, B, T = 64, 2, 6
    head_dim = d_model // n_heads
    kv_width = n_kv_heads * head_dim

    def rand(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=torch.float64) / shape[-1] ** 0.5

    w = ref.Weights(
        rand(d_model, d_model),
        rand(d_model),
        rand(kv_width, d_model),
        rand(kv_width),
        rand(kv_width, d_model),
        rand(kv_width),
        rand(d_model, d_model),
        rand(d_model),
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
    )
    x = torch.randn(B, T, d_model, generator=gen, dtype=torch.float64)
    past = None
    if t_past:
        past = tuple(
            torch.randn(B, n_kv_heads, t_past, head_dim, generator=gen, dtype=torch.float64)
            for _ in range(2)
        )
    out, (keys, values) = ref.attention(w, x, past)

    q = (x @ w.wq.T + w.bq).view(B, T, n_heads, head_dim).transpose(1, 2)
    visible = torch.ones(T, t_past + T, dtype=torch.bool).tril(diagonal=t_past)
    o = F.scaled_dot_product_attention(q, keys, values, attn_mask=visible, enable_gqa=True)
    want = o.transpose(1, 2).reshape(B, T, d_model) @ w.wo.T + w.bo
    assert torch.allclose(out, want, atol=1e-10), float((out - want).abs().max())
    k_new = (x @ w.wk.T + w.bk).view(B, T, n_kv_heads, head_dim).transpose(1, 2)
    assert torch.allclose(keys[:, :, t_past:], k_new, atol=1e-12)
    # every diagnosed mistake must really differ from the correct attention here
    for kind, knobs in ref.mistakes(w, t_past, T).items():
        wrong, _ = ref.attention(w, x, past, **knobs)
        assert float((wrong - out).abs().max()) > 1e-6, kind
