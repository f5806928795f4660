"""The grader's own attention, written head by head in float64 from a module's weights.

``attention`` takes knobs for the usual mistakes (another scale, another head mapping, no
causal mask, a mask that ignores the cache), so a wrong output can be matched to its cause.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

KV = tuple[Tensor, Tensor]


@dataclass(frozen=True)
class Weights:
    """float64 CPU copies of the four projections (``b*`` are None without bias)."""

    wq: Tensor
    bq: Tensor | None
    wk: Tensor
    bk: Tensor | None
    wv: Tensor
    bv: Tensor | None
    wo: Tensor
    bo: Tensor | None
    n_heads: int
    n_kv_heads: int

    @property
    def head_dim(self) -> int:
        return self.wq.shape[0] // self.n_heads

    @property
    def group(self) -> int:
        return self.n_heads // self.n_kv_heads

    def leaves(self) -> list[Tensor]:
        """The tensors that can carry gradients, in a fixed order."""
        return [
            t
            for t in (self.wq, self.bq, self.wk, self.bk, self.wv, self.bv, self.wo, self.bo)
            if t is not None
        ]


def weights_of(
    module: torch.nn.Module, n_heads: int, n_kv_heads: int, grad: bool = False
) -> Weights:
    """Detached float64 CPU copies of ``module``'s projections (leaves with grad if asked)."""

    def copy(t: Tensor | None) -> Tensor | None:
        if t is None:
            return None
        return t.detach().to("cpu", torch.float64).clone().requires_grad_(grad)

    layers = [getattr(module, name) for name in ("q_proj", "k_proj", "v_proj", "o_proj")]
    parts = [copy(p) for layer in layers for p in (layer.weight, layer.bias)]
    return Weights(*parts, n_heads=n_heads, n_kv_heads=n_kv_heads)  # type: ignore[arg-type]


def _linear(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    y = torch.einsum("btc,oc->bto", x, w)
    return y if b is None else y + b


def new_kv(w: Weights, x: Tensor) -> KV:
    """Keys and values of ``x`` [B, T, d_model] as [B, n_kv_heads, T, head_dim]."""
    d = w.head_dim
    keys, values = [], []
    for j in range(w.n_kv_heads):
        rows = slice(j * d, (j + 1) * d)
        keys.append(_linear(x, w.wk[rows], None if w.bk is None else w.bk[rows]))
        values.append(_linear(x, w.wv[rows], None if w.bv is None else w.bv[rows]))
    return torch.stack(keys, dim=1), torch.stack(values, dim=1)


def attention(
    w: Weights,
    x: Tensor,
    past: KV | None = None,
    *,
    scale: float | None = None,
    kv_head: Callable[[int], int] | None = None,
    causal: bool = True,
    offset_mask: bool = True,
) -> tuple[Tensor, KV]:
    """Causal GQA of ``x`` [B, T, d_model] (float64, CPU) after the cached ``past``.

    The defaults are the correct attention: scale 1/sqrt(head_dim), query head h reads KV
    head h // group, new query i sits at position T_past + i and sees keys 0 .. T_past + i.
    """
    x = x.to("cpu", torch.float64)
    d, T = w.head_dim, x.shape[1]
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    kv_head = kv_head or (lambda h: h // w.group)
    k_new, v_new = new_kv(w, x)
    if past is None:
        keys, values = k_new, v_new
    else:
        keys = torch.cat([past[0].to("cpu", torch.float64), k_new], dim=2)
        values = torch.cat([past[1].to("cpu", torch.float64), v_new], dim=2)
    S = keys.shape[2]
    t_past = S - T
    query_pos = torch.arange(T) + (t_past if offset_mask else 0)
    visible = torch.arange(S)[None, :] <= query_pos[:, None]  # [T, S]
    heads = []
    for h in range(w.n_heads):
        rows = slice(h * d, (h + 1) * d)
        q = _linear(x, w.wq[rows], None if w.bq is None else w.bq[rows])  # [B, T, d]
        j = kv_head(h)
        scores = torch.einsum("btd,bsd->bts", q, keys[:, j]) * scale
        if causal:
            scores = scores.masked_fill(~visible, float("-inf"))
        heads.append(torch.einsum("bts,bsd->btd", scores.softmax(dim=-1), values[:, j]))
    out = _linear(torch.cat(heads, dim=-1), w.wo, w.bo)
    return out, (keys, values)


def mistakes(w: Weights, past_len: int, T: int) -> dict[str, dict[str, object]]:
    """The wrong variants worth diagnosing for this shape, as keyword arguments of
    ``attention``, keyed by the failure message's lead."""
    d, d_model = w.head_dim, w.wo.shape[0]
    scales = {
        "none": 1.0,
        "d_model": 1.0 / math.sqrt(d_model),
        "head_dim": 1.0 / d,
        "times": math.sqrt(d),
    }
    # Wrong scales that coincide for this shape (1/head_dim = 1/sqrt(d_model) when
    # d_model = head_dim^2) are one variant whose message names every one of them.
    same: dict[float, list[str]] = {}
    for name, value in scales.items():
        same.setdefault(round(value, 12), []).append(name)
    out: dict[str, dict[str, object]] = {
        "scale:" + "|".join(names): {"scale": scales[names[0]]} for names in same.values()
    }
    if 1 < w.n_kv_heads < w.n_heads:
        out["grouping"] = {"kv_head": lambda h: h % w.n_kv_heads}
    if past_len + T > 1:
        out["no-mask"] = {"causal": False}
    if past_len > 0:
        out["mask-offset"] = {"offset_mask": False}
    return out
