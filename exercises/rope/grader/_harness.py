"""Cases, a safe call of the user's function, and comparisons that name the broken rule."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest
import torch
from _rope_reference import full_positions, rope

Rope = Callable[..., Any]

PAIRING = {
    "half": "pairs feature i with i + d/2 (GPT-NeoX / Llama)",
    "interleaved": "pairs feature 2i with 2i + 1 (RoFormer / GPT-J)",
}
F64 = 1e-10  # float64 against the float64 reference: any real mistake is off by far more


@dataclass(frozen=True)
class Case:
    """One call's inputs (on the device under test) and its keyword arguments."""

    q: torch.Tensor  # [B, Hq, T, D]
    k: torch.Tensor  # [B, Hk, T, D]
    positions: torch.Tensor  # [T] or [B, T], int64
    base: float = 10000.0
    layout: str = "half"
    rotary_dim: int | None = None

    @property
    def kwargs(self) -> dict[str, Any]:
        return {"base": self.base, "layout": self.layout, "rotary_dim": self.rotary_dim}

    @property
    def r(self) -> int:
        return self.q.shape[-1] if self.rotary_dim is None else self.rotary_dim

    def describe(self) -> str:
        b, hq, t, d = self.q.shape
        pos = self.positions.detach()
        if pos.device.type == "meta":
            shown = f"{list(pos.shape)} on meta"
        elif pos.numel() <= 8:
            shown = str(pos.cpu().tolist())
        else:
            pos = pos.cpu()
            shown = f"{list(pos.shape)} from {int(pos.min())} to {int(pos.max())}"
        text = (
            f"q [{b}, {hq}, {t}, {d}], k heads {self.k.shape[1]}, "
            f"{str(self.q.dtype).removeprefix('torch.')}, layout={self.layout!r}, "
            f"base={self.base:g}, positions {shown}"
        )
        return text + (f", rotary_dim={self.rotary_dim}" if self.rotary_dim is not None else "")


def make_case(
    b: int,
    hq: int,
    t: int,
    d: int,
    *,
    positions: torch.Tensor | list[int] | list[list[int]] | None = None,
    hk: int | None = None,
    seed: int = 0,
    device: str = "cpu",
    dtype: torch.dtype = torch.float64,
    uniform: bool = False,
    **kwargs: Any,
) -> Case:
    gen = torch.Generator().manual_seed(seed)
    shape_k = (b, hq if hk is None else hk, t, d)
    if uniform:  # values in [-1, 1]: tolerances in low precision stay simple
        q = torch.rand((b, hq, t, d), generator=gen, dtype=torch.float64) * 2 - 1
        k = torch.rand(shape_k, generator=gen, dtype=torch.float64) * 2 - 1
    else:
        q = torch.randn((b, hq, t, d), generator=gen, dtype=torch.float64)
        k = torch.randn(shape_k, generator=gen, dtype=torch.float64)
    pos = torch.arange(t) if positions is None else torch.as_tensor(positions)
    return Case(
        q.to(device=device, dtype=dtype),
        k.to(device=device, dtype=dtype),
        pos.to(device=device, dtype=torch.int64),
        **kwargs,
    )


# every case apply_rope was called on in this session (not on meta), and the cases whose result
# matched the reference: a wrong result that equals an earlier call's rotation, from a function
# that has handled what the other explanation says it ignores, comes from kept state
CALLS: list[Case] = []
PASSED: list[Case] = []
HISTORY = 200  # the most recent cases searched


def call(fn: Rope, case: Case, strict: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """The user's (q_rot, k_rot), after checking the inputs were left alone and the form."""
    if case.q.device.type != "meta" and case.positions.device.type != "meta":
        CALLS.append(case)
    before = [x.clone() for x in (case.q, case.k, case.positions)]
    try:
        result = fn(case.q, case.k, case.positions, **case.kwargs)
    except NotImplementedError as exc:
        pytest.fail(
            f"apply_rope is not implemented yet (NotImplementedError: {exc})", pytrace=False
        )
    except Exception as exc:
        hint = ""
        top = int(case.positions.max()) if case.positions.device.type != "meta" else 0
        if isinstance(exc, IndexError) and top >= case.q.shape[2]:
            hint = (
                f": positions go up to {top} with T = {case.q.shape[2]}; compute the angles "
                "from the positions themselves, not from a table of length T"
            )
        pytest.fail(
            f"apply_rope raised {type(exc).__name__}: {exc} ({case.describe()}){hint}",
            pytrace=False,
        )
    if case.q.device.type != "meta":
        for name, old, new in zip(
            ("q", "k", "positions"), before, (case.q, case.k, case.positions), strict=True
        ):
            if not torch.equal(old, new):
                pytest.fail(
                    f"apply_rope modified its input `{name}` in place ({case.describe()}): "
                    "return new tensors (no slice assignment, mul_ or copy_ into the inputs)",
                    pytrace=False,
                )
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        pytest.fail(
            f"apply_rope must return a tuple (q_rotated, k_rotated), got {type(result).__name__}",
            pytrace=False,
        )
    for name, out, given in zip(("q", "k"), result, (case.q, case.k), strict=True):
        if not isinstance(out, torch.Tensor):
            pytest.fail(f"the rotated {name} must be a torch.Tensor, got {type(out).__name__}")
        assert tuple(out.shape) == tuple(given.shape), (
            f"the rotated {name} has shape {tuple(out.shape)}, expected {tuple(given.shape)} "
            f"({case.describe()})"
        )
        assert out.dtype == given.dtype, (
            f"the rotated {name} has dtype {out.dtype}, expected the input's dtype "
            f"{given.dtype} ({case.describe()}): compute in float32 or float64, then cast back"
        )
        assert out.device == given.device, (
            f"the rotated {name} is on {out.device}, the input on {given.device} "
            f"({case.describe()})"
        )
        if strict and out.device.type != "meta" and not bool(torch.isfinite(out).all()):
            pytest.fail(
                f"the rotated {name} holds NaN or inf ({case.describe()}){_nan_hint(case)}",
                pytrace=False,
            )
    return result[0], result[1]


def _nan_hint(case: Case) -> str:
    top = int(case.positions.max())
    if case.q.dtype == torch.float16 and top > 65504:
        return (
            f": positions go up to {top}, more than float16 can hold (65504): compute the "
            "angles positions * theta in float32 (at least), never in the input's half precision"
        )
    return ""


def variants(case: Case) -> list[tuple[str, str, dict[str, Any]]]:
    """Known mistakes that make sense for this case: (kind, message, reference arguments)."""
    b, _, t, d = case.q.shape
    other = "interleaved" if case.layout == "half" else "half"
    found: list[tuple[str, str, dict[str, Any]]] = [
        (
            "layout",
            f"the {case.layout} layout {PAIRING[case.layout]}; your output matches the {other} "
            f"pairing ({PAIRING[other].split(' (')[0].removeprefix('pairs ')})",
            {"layout": other},
        ),
        (
            "sign",
            "the rotation goes the wrong way (sin sign flipped): pair (x1, x2) at angle a "
            "becomes (x1 cos a - x2 sin a, x1 sin a + x2 cos a)",
            {"sign": -1.0},
        ),
        (
            "i/r",
            "pair i turns by theta_i = base^(-2i/d) per position; your frequencies are "
            "base^(-i/d) (i where 2i belongs)",
            {"rule": "i/r"},
        ),
        (
            "-2i/r",
            "pair i turns by theta_i = base^(-2i/d) per position (a negative exponent); your "
            "frequencies are base^(+2i/d)",
            {"rule": "-2i/r"},
        ),
    ]
    if case.rotary_dim is not None and case.rotary_dim < d:
        found[:0] = [
            (
                "tail",
                f"features rotary_dim .. D-1 ({case.rotary_dim} .. {d - 1}) must pass through "
                "unchanged; your output rotates the whole head",
                {"rotate_tail": True},
            ),
            (
                "2i/d",
                "with rotary_dim < D the frequencies are theta_i = base^(-2i/rotary_dim); yours "
                "use the head size D",
                {"rule": "2i/d"},
            ),
        ]
    if case.base != 10000.0:
        found.append(
            (
                "base",
                f"the base argument is ignored: your output matches base=10000, not {case.base:g}",
                {"base": 10000.0},
            )
        )
    pos = full_positions(case.positions, b, t)
    if b > 1 and not bool((pos == pos[:1]).all()):
        found.append(
            (
                "row0",
                "positions are per batch row ([B, T]); your output rotates every row with the "
                "positions of row 0",
                {"positions": pos[0]},
            )
        )
    counting = torch.arange(t).expand(b, t)
    consecutive = pos[:, :1] + counting
    if not torch.equal(consecutive, pos) and not torch.equal(consecutive, counting):
        found.append(
            (
                "consecutive",
                "positions need not be consecutive (left padding repeats a position): token t "
                "must be rotated by its own position positions[..., t]; your output matches "
                "positions[..., 0] + 0 .. T-1",
                {"positions": consecutive},
            )
        )
    if not torch.equal(pos, counting):
        same = (
            " (here the same as positions[..., 0] + 0 .. T-1: do not assume consecutive "
            "positions either)"
            if torch.equal(consecutive, counting)
            else ""
        )
        found.append(
            (
                "ignored",
                "positions are ignored: token t must be rotated by its given position "
                "positions[..., t] (a decode step at T_past is not at 0); your output matches "
                f"positions 0 .. T-1{same}",
                {"positions": torch.arange(t)},
            )
        )
    half = case.q.dtype in (torch.float16, torch.bfloat16)
    if half and int(pos.max()) <= torch.finfo(case.q.dtype).max:
        rounded = pos.to(case.q.dtype).long()
        if not torch.equal(rounded, pos):
            at = tuple(int(i) for i in (rounded != pos).nonzero()[0])
            type_name = str(case.q.dtype).removeprefix("torch.")
            found.append(
                (
                    "rounded",
                    f"positions were rounded to {type_name} before the angles were computed "
                    f"(position {int(pos[at])} became {int(rounded[at])}): convert the int64 "
                    "positions to float32 (float64 for float64 inputs), never to the input's "
                    "half precision",
                    {"positions": rounded},
                )
            )
    return found


def reference(case: Case, x: torch.Tensor, **change: Any) -> torch.Tensor:
    args = {"positions": case.positions, **case.kwargs}
    knobs = {key: change.pop(key) for key in ("rule", "sign", "rotate_tail") if key in change}
    args.update(change)
    return rope(x, args.pop("positions"), **args, **knobs)


def worst(got: torch.Tensor, want: torch.Tensor) -> tuple[float, tuple[int, ...]]:
    err = (got.detach().cpu().double() - want).abs()
    flat = int(err.argmax())
    return float(err.max()), tuple(
        int(i) for i in torch.unravel_index(torch.tensor(flat), err.shape)
    )


# |got - reference| allowed on values of order 1 at positions up to a few thousand
ATOL = {torch.float64: F64, torch.float32: 5e-4, torch.float16: 4e-3, torch.bfloat16: 3e-2}


def _match(out: torch.Tensor, x: torch.Tensor, case: Case, atol: float) -> tuple[str, str] | None:
    """(kind, message) of the known mistake whose result ``out`` (the rotated ``x``) matches."""
    want = reference(case, x)
    for kind, message, change in variants(case):
        alt = reference(case, x, **change)
        if worst(out, alt)[0] <= max(atol, 1e-6) and worst(alt, want)[0] > 10 * atol:
            return kind, message
    return None


def _handled(kind: str) -> bool:
    """Whether an earlier call gave the right result where mistake ``kind`` would not have."""
    for old in PASSED[-HISTORY:]:
        tol = ATOL[old.q.dtype]
        for other, _, change in variants(old):
            if other == kind:
                alt = reference(old, old.q, **change)
                if worst(alt, reference(old, old.q))[0] > 10 * tol:
                    return True
    return False


def stale_call(out: torch.Tensor, x: torch.Tensor, case: Case, atol: float) -> Case | None:
    """An earlier call (same T and D) whose rotation ``out`` is, where this call's differs."""
    want = reference(case, x)
    for old in reversed(CALLS[-HISTORY:]):
        if old is case or tuple(old.q.shape[2:]) != tuple(case.q.shape[2:]):
            continue
        try:
            stale = reference(on(old, q=x), x)
        except (RuntimeError, ValueError, IndexError):
            continue  # the earlier positions do not fit this batch
        if worst(out, stale)[0] <= max(atol, 1e-6) and worst(stale, want)[0] > 10 * atol:
            return old
    return None


def stale_message(old: Case, case: Case) -> str:
    return (
        f"results depend on an earlier call: this call ({case.describe()}) returned the "
        f"rotation of an earlier call with the same T ({old.describe()}): compute cos and sin "
        "from this call's positions, base, layout and sizes (no cache in a global variable "
        "keyed on the length or the shape)"
    )


def named_mistake(out: torch.Tensor, x: torch.Tensor, case: Case, atol: float) -> str | None:
    """The message of the known mistake whose result ``out`` (the rotated ``x``) matches, or
    of state kept from an earlier call."""
    found = _match(out, x, case, atol)
    old = stale_call(out, x, case, atol)
    if old is not None and (found is None or _handled(found[0])):
        return stale_message(old, case)
    if found is not None:
        return f"{found[1]} ({case.describe()})"
    return None


def compare(
    got: tuple[torch.Tensor, torch.Tensor],
    case: Case,
    rule: str,
    atol: float | None = None,
) -> None:
    """Both outputs against the float64 reference; a mismatch is named by the mistake it
    matches, else reported at its worst element under ``rule``."""
    atol = ATOL[case.q.dtype] if atol is None else atol
    if all(
        worst(out, reference(case, x))[0] <= atol for out, x in ((got[0], case.q), (got[1], case.k))
    ):
        PASSED.append(case)
        return
    for name, out, x in (("q", got[0], case.q), ("k", got[1], case.k)):
        want = reference(case, x)
        err, at = worst(out, want)
        if err <= atol:
            continue
        named = named_mistake(out, x, case, atol)
        if named is not None:
            pytest.fail(named, pytrace=False)
        b, h, t, f = at
        values = (
            f"the rotated {name} at batch {b}, head {h}, token {t} (position "
            f"{int(full_positions(case.positions, case.q.shape[0], case.q.shape[2])[b, t])}), "
            f"feature {f} is {float(out[at]):.10g}, expected {float(want[at]):.10g} "
            f"(|difference| {err:.3g} > {atol:g} allowed)"
        )
        if case.q.dtype == torch.float64 and err < 1e-3:
            pytest.fail(
                f"the values are less precise than float64 allows: {values} ({case.describe()}): "
                "for float64 inputs compute the angles, cos and sin in float64 (the compute "
                "dtype is the wider of float32 and the input's dtype)",
                pytrace=False,
            )
        pytest.fail(f"{rule}: {values} ({case.describe()})", pytrace=False)


def on(case: Case, **change: Any) -> Case:
    return replace(case, **change)
