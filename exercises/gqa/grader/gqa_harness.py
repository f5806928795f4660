"""How the grader builds and calls the user's module: built-in attention is refused, every
result is checked for form, and a wrong output is traced to its most likely cause."""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Any

import gqa_reference as ref
import pytest
import torch
from gqa_devices import HostTensors, Mix
from torch import Tensor, nn
from torch.overrides import TorchFunctionMode

KV = tuple[Tensor, Tensor]
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj")
# built-in attention functions and kernels, whatever route reaches them (torch.ops included)
_ATTENTION_NAMES = (
    "scaled_dot_product",
    "flash_attention",
    "efficient_attention",
    "cudnn_attention",
    "multi_head_attention",
)


class ForbiddenAttention(RuntimeError):
    """Raised inside the user's forward when a built-in attention function is called."""


def _refusal(name: str) -> str:
    return (
        f"{name} is not allowed in this exercise: write the attention maths yourself "
        "(scores = q k^T / sqrt(head_dim), causal mask, softmax, weights @ v)"
    )


@dataclass
class Guard:
    """Records calls to built-in attention; active while the user's forward runs."""

    calls: list[str] = field(default_factory=list)

    def refuse(self, name: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            raise ForbiddenAttention(_refusal(name))

        return refused

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Replace the Python entry points (before the solution is imported, so that
        ``from torch.nn.functional import scaled_dot_product_attention`` gets the stub)."""
        functional = torch.nn.functional
        for owner, attr, name in (
            (
                functional,
                "scaled_dot_product_attention",
                "torch.nn.functional.scaled_dot_product_attention",
            ),
            (
                torch._C._nn,
                "scaled_dot_product_attention",
                "torch.nn.functional.scaled_dot_product_attention",
            ),
            (
                functional,
                "multi_head_attention_forward",
                "torch.nn.functional.multi_head_attention_forward",
            ),
            (nn.MultiheadAttention, "forward", "torch.nn.MultiheadAttention"),
        ):
            monkeypatch.setattr(owner, attr, self.refuse(name))


class _AttentionGuard(TorchFunctionMode):
    """Sees every torch function the forward calls; refuses the attention ones, also when
    reached another way (``torch.ops.aten...``, ``torch._C._nn``)."""

    def __init__(self, guard: Guard) -> None:
        super().__init__()
        self.guard = guard

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        name = getattr(func, "__name__", None) or str(func)
        if any(part in name for part in _ATTENTION_NAMES):
            self.guard.calls.append(name)
            raise ForbiddenAttention(_refusal(f"torch attention function {name}"))
        return func(*args, **(kwargs or {}))


@dataclass(frozen=True)
class Config:
    d_model: int
    n_heads: int
    n_kv_heads: int
    bias: bool = False

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def kind(self) -> str:
        if self.n_kv_heads == self.n_heads:
            return "MHA"
        return "MQA" if self.n_kv_heads == 1 else "GQA"

    @property
    def tag(self) -> str:
        """Short test id, e.g. gqa8x2 (query heads x KV heads)."""
        bias = "-bias" if self.bias else ""
        return f"{self.kind.lower()}{self.n_heads}x{self.n_kv_heads}{bias}"

    def __str__(self) -> str:
        extra = ", bias=True" if self.bias else ""
        return (
            f"{self.kind} d_model={self.d_model}, n_heads={self.n_heads}, "
            f"n_kv_heads={self.n_kv_heads}{extra}"
        )


def not_implemented(exc: NotImplementedError) -> None:
    pytest.fail(
        f"GroupedQueryAttention is not implemented yet (NotImplementedError: {exc})", pytrace=False
    )


@dataclass
class Harness:
    cls: type
    guard: Guard

    def construct(self, d_model: int, n_heads: int, n_kv_heads: int, bias: bool = False) -> Any:
        """Call the constructor; any exception becomes a clear failure."""
        args = f"GroupedQueryAttention({d_model}, {n_heads}, {n_kv_heads}, bias={bias})"
        try:
            return self.cls(d_model, n_heads, n_kv_heads, bias=bias)
        except NotImplementedError as exc:
            not_implemented(exc)
        except Exception as exc:
            pytest.fail(f"{args} raised {type(exc).__name__}: {exc}", pytrace=False)

    def build(
        self, cfg: Config, seed: int = 0, dtype: torch.dtype = torch.float64, device: str = "cpu"
    ) -> nn.Module:
        """A module with seeded weights (std 1/sqrt(fan_in): scores of order 1)."""
        module = self.construct(cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.bias)
        check_projections(module, cfg)
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name in PROJECTIONS:
                layer = getattr(module, name)
                fan_in = layer.weight.shape[1]
                layer.weight.copy_(torch.randn(layer.weight.shape, generator=gen) / fan_in**0.5)
                if layer.bias is not None:
                    layer.bias.copy_(0.5 * torch.randn(layer.bias.shape, generator=gen))
        return module.to(device=device, dtype=dtype)

    def call(
        self, module: nn.Module, x: Tensor, past: KV | None, what: str, strict: bool = True
    ) -> Any:
        """``module(x, past_kv=past)`` with built-in attention refused and tensors off the
        input's device followed; the result is not checked. An error fails the check; with
        ``strict=False`` an error that is neither of those gives None instead (a forward on
        the ``meta`` device that reads values, e.g. ``.item()``, is not held against it)."""
        self.guard.calls.clear()
        host = HostTensors(inspect.getfile(self.cls), x.device)
        result = None
        try:
            with _AttentionGuard(self.guard), host:
                result = module(x, past_kv=past)
        except ForbiddenAttention as exc:
            pytest.fail(str(exc), pytrace=False)
        except NotImplementedError as exc:
            if strict:
                not_implemented(exc)
        except Exception as exc:
            if strict and host.mix is None:
                pytest.fail(f"forward raised {type(exc).__name__}: {exc} ({what})", pytrace=False)
        if self.guard.calls:  # called, and the error swallowed by the solution
            pytest.fail(_refusal(self.guard.calls[0]), pytrace=False)
        if host.mix is not None:  # on a GPU the mixed operation itself may have raised
            pytest.fail(_mixed_devices(host.mix, x, what), pytrace=False)
        return result

    def run(
        self, module: nn.Module, cfg: Config, x: Tensor, past: KV | None, what: str
    ) -> tuple[Tensor, KV]:
        """``call``, then the form of ``(out, (keys, values))``: shapes, dtype, device."""
        result = self.call(module, x, past, what)
        return check_output(result, cfg, x, what), check_cache(result, cfg, x, past, what)


def _mixed_devices(mix: Mix, x: Tensor, what: str) -> str:
    made = f"device: {mix.origin.created} creates a tensor {list(mix.shape)}"
    if mix.origin.placed is None:
        made += " without device=, so it is on the CPU whatever the input's device,"
    else:
        made += f" on the fixed device {mix.origin.placed!r} (not the input's),"
    return (
        f"{made} and {mix.operation} combines it with tensors on the input's device "
        f"({x.device} here; {what}). On a GPU that raises 'Expected all tensors to be on the "
        "same device': create it with device=x.device (or torch.*_like, x.new_*, "
        ".to(x.device))"
    )


def check_projections(module: Any, cfg: Config) -> None:
    """Names, types and shapes of the four projections; bias present iff asked for."""
    d, hd = cfg.d_model, cfg.head_dim
    shapes = {
        "q_proj": (cfg.n_heads * hd, d),
        "k_proj": (cfg.n_kv_heads * hd, d),
        "v_proj": (cfg.n_kv_heads * hd, d),
        "o_proj": (d, cfg.n_heads * hd),
    }
    for name, (out_f, in_f) in shapes.items():
        layer = getattr(module, name, None)
        assert isinstance(layer, nn.Linear), (
            f"module structure: {name} must be an nn.Linear submodule ({cfg}), got "
            f"{type(layer).__name__}"
        )
        got = (layer.out_features, layer.in_features)
        assert got == (out_f, in_f), (
            f"module structure: {name} is Linear({got[1]}, {got[0]}), expected "
            f"Linear({in_f}, {out_f}) ({cfg}, head_dim={hd})"
        )
        assert (layer.bias is not None) == cfg.bias, (
            f"module structure: {name} {'has no' if cfg.bias else 'has a'} bias, but bias="
            f"{cfg.bias} was passed ({cfg})"
        )


def check_output(result: Any, cfg: Config, x: Tensor, what: str) -> Tensor:
    """``out`` of ``(out, (keys, values))``: [B, T, d_model], the input's dtype and device."""
    form = "forward must return (out, (keys, values))"
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        pytest.fail(f"{form}, got {type(result).__name__} ({what})", pytrace=False)
    out = result[0]
    if not isinstance(out, Tensor):
        pytest.fail(f"{form}: out is a {type(out).__name__} ({what})", pytrace=False)
    B, T = x.shape[0], x.shape[1]
    assert tuple(out.shape) == (B, T, cfg.d_model), (
        f"output has shape {tuple(out.shape)}, expected [B, T, d_model] = "
        f"{(B, T, cfg.d_model)} ({what})"
    )
    assert out.dtype == x.dtype and out.device == x.device, (
        f"output is {out.dtype} on {out.device}, the input is {x.dtype} on {x.device} ({what})"
    )
    return out


def check_cache(result: Any, cfg: Config, x: Tensor, past: KV | None, what: str) -> KV:
    """``(keys, values)`` of ``(out, (keys, values))``: the past followed by the new
    positions, [B, n_kv_heads, T_past + T, head_dim], on the input's device."""
    form = "forward must return (out, (keys, values))"
    cache = result[1] if isinstance(result, (tuple, list)) and len(result) == 2 else None
    if not (
        isinstance(cache, (tuple, list))
        and len(cache) == 2
        and all(isinstance(t, Tensor) for t in cache)
    ):
        pytest.fail(f"{form}: the cache must be a pair of tensors ({what})", pytrace=False)
    keys, values = cache
    t_past = 0 if past is None else past[0].shape[2]
    want = (x.shape[0], cfg.n_kv_heads, t_past + x.shape[1], cfg.head_dim)
    assert tuple(keys.shape) == want and tuple(values.shape) == want, (
        f"returned KV cache has shape keys {tuple(keys.shape)}, values {tuple(values.shape)}; "
        f"expected [B, n_kv_heads, T_past + T, head_dim] = {want} for both, the past "
        f"followed by the new positions ({what})"
    )
    assert keys.device == x.device and values.device == x.device, (
        f"returned KV cache is on {keys.device} and {values.device}, the input is on "
        f"{x.device} ({what}): keep the cache on the input's device"
    )
    return keys, values


def worst(got: Tensor, want: Tensor) -> tuple[float, tuple[int, ...]]:
    """Largest |got - want| (inf for NaN) and where."""
    err = (got.detach().to("cpu", torch.float64) - want.detach()).abs()
    err = torch.nan_to_num(err, nan=math.inf)
    flat = int(err.argmax())
    return float(err.max()), tuple(
        int(i) for i in torch.unravel_index(torch.tensor(flat), err.shape)
    )


_LEADS = {
    "scale:none": "1 (no scaling)",
    "scale:d_model": "1/sqrt(d_model)",
    "scale:head_dim": "1/head_dim",
    "scale:times": "sqrt(head_dim) (multiplied instead of divided)",
}


def explain(kind: str, cfg: Config, what: str) -> str:
    """The failure message for an output that matches the mistake ``kind``."""
    if kind.startswith("scale:"):
        leads = [_LEADS["scale:" + name] for name in kind.removeprefix("scale:").split("|")]
        return (
            f"attention scale is wrong ({what}): the output matches scores scaled by "
            f"{' or, the same for this shape, by '.join(leads)}, but q k^T must be multiplied "
            f"by 1/sqrt(head_dim) = 1/sqrt({cfg.head_dim})"
        )
    if kind == "grouping":
        g = cfg.n_heads // cfg.n_kv_heads
        return (
            f"KV head grouping is wrong ({what}): the output matches query head h reading KV "
            f"head h % n_kv_heads (what .repeat gives); it must read KV head "
            f"h // (n_heads // n_kv_heads) = h // {g}, as repeat_interleave or a view "
            "[B, n_kv_heads, group, T, head_dim] of the query heads give"
        )
    if kind == "no-mask":
        return (
            f"causal mask missing ({what}): the output matches attention over all positions; "
            "query t may only attend to keys at positions <= t"
        )
    return (
        f"KV cache: the causal mask ignores T_past ({what}): the output matches new query i "
        "seeing keys 0..i only; with T_past cached positions it sits at position T_past + i "
        "and must see keys 0..T_past + i (e.g. ones(T, S).tril(diagonal=S - T))"
    )


def compare(
    got: Tensor,
    w: ref.Weights,
    x: Tensor,
    past: KV | None,
    cfg: Config,
    what: str,
    atol: float,
    lead: str = "",
) -> None:
    """Fail unless ``got`` is the reference attention within ``atol``; name the mistake when
    the output matches a known wrong variant."""
    want, _ = ref.attention(w, x, past)
    err, where = worst(got, want)
    if err <= atol:
        return
    t_past = 0 if past is None else past[0].shape[2]
    for kind, knobs in ref.mistakes(w, t_past, x.shape[1]).items():
        wrong, _ = ref.attention(w, x, past, **knobs)
        if float((wrong - want).abs().max()) > 10 * atol and worst(got, wrong)[0] <= atol:
            pytest.fail(explain(kind, cfg, what), pytrace=False)
    b, t, c = where
    pytest.fail(
        f"{lead}output differs from the reference attention ({what}): max |diff| = {err:.3g} "
        f"> {atol:g} at batch {b}, position {t}, feature {c} (expected "
        f"{float(want[b, t, c]):.6g}, got {float(got[b, t, c]):.6g})",
        pytrace=False,
    )
