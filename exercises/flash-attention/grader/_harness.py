"""Cases, safe calls of the user's functions, and comparisons that name the broken rule."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import torch
from _reference import (
    attention,
    gradients,
    gradients_by_formula,
    row_max,
    skipped_off_by_one,
    tiled_without_rescale,
)
from torch.utils._python_dispatch import _disable_current_modes

Fn = Callable[..., Any]
Pair = tuple[torch.Tensor, torch.Tensor]
Triple = tuple[torch.Tensor, torch.Tensor, torch.Tensor]

# |got - want| allowed: o and the gradients absolute (scaled by the largest reference value
# when that is above 1), lse relative to max(1, |lse|)
TOL = {torch.float64: 1e-6, torch.float32: 1e-4}
LSE_REL = 1e-5


@dataclass(frozen=True)
class Case:
    """One call's inputs (on the device under test) and its keyword arguments."""

    q: torch.Tensor  # [B, H, Nq, d]
    k: torch.Tensor  # [B, H, Nk, d]
    v: torch.Tensor  # [B, H, Nk, d]
    causal: bool = False
    block_q: int = 16
    block_k: int = 16

    @property
    def kwargs(self) -> dict[str, Any]:
        return {"causal": self.causal, "block_q": self.block_q, "block_k": self.block_k}

    @property
    def nq(self) -> int:
        return self.q.shape[-2]

    @property
    def nk(self) -> int:
        return self.k.shape[-2]

    def describe(self) -> str:
        b, h, nq, d = self.q.shape
        return (
            f"q [{b}, {h}, {nq}, {d}], k and v [{b}, {h}, {self.nk}, {d}], "
            f"{str(self.q.dtype).removeprefix('torch.')}, causal={self.causal}, "
            f"block_q={self.block_q}, block_k={self.block_k}"
        )


def make_case(
    b: int,
    h: int,
    nq: int,
    nk: int,
    d: int,
    *,
    causal: bool = False,
    block_q: int = 16,
    block_k: int = 16,
    seed: int = 0,
    spread: float = 1.0,
    device: str = "cpu",
    dtype: torch.dtype = torch.float64,
) -> Case:
    """Random inputs; ``spread`` multiplies q, so the scores have a standard deviation of
    about ``spread``."""
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn((b, h, nq, d), generator=gen, dtype=torch.float64) * spread
    k = torch.randn((b, h, nk, d), generator=gen, dtype=torch.float64)
    v = torch.randn((b, h, nk, d), generator=gen, dtype=torch.float64)
    return Case(*(x.to(device=device, dtype=dtype) for x in (q, k, v)), causal, block_q, block_k)


def shape_id(b: int, h: int, nq: int, nk: int, d: int, bq: int, bk: int) -> str:
    return f"B{b}-H{h}-Nq{nq}-Nk{nk}-d{d}-bq{bq}-bk{bk}"


def _invoke(fn: Fn, name: str, args: tuple[torch.Tensor, ...], case: Case) -> Any:
    with _disable_current_modes():  # the grader's copies are not the call's tensors
        before = [x.clone() for x in args]
    try:
        result = fn(*args, **case.kwargs)
    except NotImplementedError as exc:
        pytest.fail(f"{name} is not implemented yet (NotImplementedError: {exc})", pytrace=False)
    except Exception as exc:
        pytest.fail(f"{name} raised {type(exc).__name__}: {exc} ({case.describe()})", pytrace=False)
    with _disable_current_modes():
        changed = [not torch.equal(old, new) for old, new in zip(before, args, strict=True)]
    for label, differs in zip(("q", "k", "v", "o", "lse", "do"), changed, strict=False):
        if differs:
            pytest.fail(
                f"{name} modified its input `{label}` in place ({case.describe()}): work on "
                "new tensors",
                pytrace=False,
            )
    return result


def _check_form(
    name: str, result: Any, want: list[tuple[str, tuple[int, ...]]], case: Case
) -> list[torch.Tensor]:
    if not isinstance(result, (tuple, list)) or len(result) != len(want):
        names = ", ".join(label for label, _ in want)
        pytest.fail(
            f"{name} must return a tuple ({names}), got {type(result).__name__}"
            + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else ""),
            pytrace=False,
        )
    for out, (label, shape) in zip(result, want, strict=True):
        if not isinstance(out, torch.Tensor):
            pytest.fail(f"{label} must be a torch.Tensor, got {type(out).__name__}", pytrace=False)
        if tuple(out.shape) != shape:
            pytest.fail(
                f"{label} has shape {list(out.shape)}, expected {list(shape)} ({case.describe()})",
                pytrace=False,
            )
        if out.dtype != case.q.dtype or out.device != case.q.device:
            pytest.fail(
                f"{label} is {out.dtype} on {out.device}, expected {case.q.dtype} on "
                f"{case.q.device}, like q ({case.describe()})",
                pytrace=False,
            )
    return list(result)


def _max_score(case: Case) -> float:
    return float(
        (case.q.double() @ case.k.double().transpose(-1, -2)).abs().max()
        / math.sqrt(case.q.shape[-1])
    )


def _finite(label: str, out: torch.Tensor, case: Case) -> None:
    if bool(torch.isfinite(out).all()):
        return
    top = _max_score(case)
    limit = math.log(torch.finfo(case.q.dtype).max)
    hint = (
        f": the scores reach {top:.4g} and exp overflows above {limit:.1f} in "
        f"{str(case.q.dtype).removeprefix('torch.')}; take exp(s - m) with the running row "
        "max m, never exp(s)"
        if top > limit
        else ""
    )
    pytest.fail(f"{label} holds NaN or inf ({case.describe()}){hint}", pytrace=False)


def call_forward(fn: Fn, case: Case) -> Pair:
    """The user's (o, lse), after checking the inputs were left alone and the form."""
    result = _invoke(fn, "flash_attention_forward", (case.q, case.k, case.v), case)
    b, h, nq, d = case.q.shape
    o, lse = _check_form(
        "flash_attention_forward", result, [("o", (b, h, nq, d)), ("lse", (b, h, nq))], case
    )
    if case.q.device.type != "meta":
        _finite("o", o, case)
        _finite("lse", lse, case)
    return o, lse


def call_backward(
    fn: Fn, case: Case, o: torch.Tensor, lse: torch.Tensor, do: torch.Tensor
) -> Triple:
    """The user's (dq, dk, dv) for the reference o and lse."""
    args = (case.q, case.k, case.v, o, lse, do)
    result = _invoke(fn, "flash_attention_backward", args, case)
    want = [("dq", tuple(case.q.shape)), ("dk", tuple(case.k.shape)), ("dv", tuple(case.v.shape))]
    dq, dk, dv = _check_form("flash_attention_backward", result, want, case)
    for label, grad in (("dq", dq), ("dk", dk), ("dv", dv)):
        _finite(label, grad, case)
    return dq, dk, dv


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index = []
    for size in reversed(shape):
        flat, rest = divmod(flat, size)
        index.append(rest)
    return tuple(reversed(index))


def worst(got: torch.Tensor, want: torch.Tensor) -> tuple[float, tuple[int, ...]]:
    """The largest |got - want| (NaN counts as inf) and where it is."""
    err = (got.detach().double().cpu() - want.double().cpu()).abs().nan_to_num(math.inf)
    return float(err.max()), _unravel(int(err.argmax()), tuple(err.shape))


def _lse_error(got: torch.Tensor, want: torch.Tensor) -> tuple[float, tuple[int, ...]]:
    """The largest |got - want| / max(1, |want|) and where it is."""
    want = want.double().cpu()
    err = (got.detach().double().cpu() - want).abs() / want.abs().clamp(min=1.0)
    err = err.nan_to_num(math.inf)
    return float(err.max()), _unravel(int(err.argmax()), tuple(err.shape))


def _mask_rule(case: Case) -> str:
    if not case.causal:
        return "o = softmax(q k^T / sqrt(d)) v"
    return (
        "o = softmax(q k^T / sqrt(d) + causal mask) v, query i seeing keys j <= i + Nk - Nq "
        f"= i + {case.nk - case.nq}"
    )


def _o_mistakes(case: Case) -> list[tuple[str, torch.Tensor]]:
    """Known mistakes that make sense for this case: (message, the o they give)."""
    q, k, v = (x.double() for x in (case.q, case.k, case.v))
    d, nq, nk, bk = q.shape[-1], case.nq, case.nk, case.block_k
    found = [
        (
            f"the scores must be multiplied by the softmax scale 1/sqrt(d) = "
            f"{1 / math.sqrt(d):.4g} before the softmax; your o matches softmax(q k^T) v "
            "without it",
            attention(q, k, v, case.causal, scale=1.0)[0],
        ),
        (
            "when a key tile raises a row's running max from m_old to m_new, the running sum l "
            "and the accumulator must both be multiplied by exp(m_old - m_new); your o matches "
            "an online softmax that rescales neither",
            tiled_without_rescale(q, k, v, case.causal, bk, rescale_sum=False)[0],
        ),
        (
            "when a key tile raises a row's running max from m_old to m_new, the accumulator "
            "must be multiplied by exp(m_old - m_new) like the running sum l; your o matches "
            "an online softmax that rescales the running sum but not the accumulator",
            tiled_without_rescale(q, k, v, case.causal, bk, rescale_sum=True)[0],
        ),
    ]
    if case.causal and nq != nk:
        found.insert(
            0,
            (
                f"the causal mask is aligned bottom-right: query i sees keys j <= i + Nk - Nq "
                f"(here i + {nk - nq}), as for new tokens appended after a KV cache; your o "
                "matches the top-left alignment j <= i (what scaled_dot_product_attention's "
                "is_causal=True does)",
                attention(q, k, v, True, align="top-left")[0],
            ),
        )
    full = nk // bk * bk
    if case.causal:
        hide = skipped_off_by_one(nq, nk, case.block_q, bk)
        if bool(hide.any()):
            rows, cols = (int(x) for x in hide.nonzero()[0])
            alt = attention(q, k, v, True, hide=hide)[0]
            also = ""
            if 0 < full < nk and worst(alt, attention(q, k, v, True, keys=full)[0])[0] < 1e-12:
                also = (
                    f" (the same result as dropping keys {full}..{nk - 1}, the last partial "
                    "K/V tile, so check that too)"
                )
            found.insert(
                0,
                (
                    "the causal tile skip is off by one: skip a key tile only when its first "
                    "key j0 > i_last + Nk - Nq, with i_last the last query of the query tile; "
                    "yours also skips the tile that starts at j0 = i_last + Nk - Nq, which that "
                    f"query sees (e.g. query {rows} loses key {cols}){also}",
                    alt,
                ),
            )
    if 0 < full < nk:
        found.insert(
            1 if found[0][0].startswith("the causal tile skip") else 0,
            (
                f"keys {full}..{nk - 1} are ignored: they form the last partial K/V tile "
                f"(Nk = {nk} is not a multiple of block_k = {bk}); loop over all Nk keys and let "
                "the last tile be shorter",
                attention(q, k, v, case.causal, keys=full)[0],
            ),
        )
    return found


def _named(
    got: torch.Tensor, want: torch.Tensor, mistakes: list[tuple[str, torch.Tensor]], tol: float
) -> str | None:
    for message, alt in mistakes:
        if not bool(torch.isfinite(alt).all()):
            continue
        if worst(got, alt)[0] <= tol and worst(alt, want)[0] > 10 * tol:
            return message
    return None


def _tolerance(case: Case, want: torch.Tensor) -> float:
    return TOL[case.q.dtype] * max(1.0, float(want.abs().max()))


def check_forward(got: Pair, case: Case, what: str = "") -> None:
    """(o, lse) against the float64 reference; a mismatch is named by the mistake it matches."""
    o, lse = got
    q, k, v = (x.double() for x in (case.q, case.k, case.v))
    want_o, want_lse = attention(q, k, v, case.causal)
    where = f" ({case.describe()}{'; ' + what if what else ''})"
    tol = _tolerance(case, want_o)
    err, at = worst(o, want_o)
    if err > tol:
        _float32_precision(o, want_o, case, err, tol, where)
        named = _named(o, want_o, _o_mistakes(case), tol)
        if named is not None:
            pytest.fail(named + where, pytrace=False)
        _query_tail(o, want_o, case, tol, where)
        b, h, i, f = at
        pytest.fail(
            f"{_mask_rule(case)}: o at batch {b}, head {h}, query {i}, feature {f} is "
            f"{float(o[at]):.10g}, expected {float(want_o[at]):.10g} (|difference| {err:.3g} > "
            f"{tol:.3g} allowed){where}",
            pytrace=False,
        )
    err, at = _lse_error(lse, want_lse)
    if err > LSE_REL:
        mistakes = [
            (
                f"the scores must be multiplied by the softmax scale 1/sqrt(d) = "
                f"{1 / math.sqrt(q.shape[-1]):.4g} before the softmax; your lse matches the "
                "log-sum-exp of q k^T without it",
                attention(q, k, v, case.causal, scale=1.0)[1],
            ),
            (
                "lse must be the log-sum-exp of the row, m + log(l) with the running max m "
                "and sum l; yours matches the row max m alone",
                row_max(q, k, case.causal),
            ),
            (
                "lse must be in natural log (the backward rebuilds P = exp(S - lse)); yours is "
                "in base 2 (log2): if you work with exp2, convert back with lse = lse2 * ln 2",
                want_lse / math.log(2.0),
            ),
        ]
        named = _named(lse, want_lse, mistakes, 1e-6 * max(1.0, float(want_lse.abs().max())))
        if named is not None:
            pytest.fail(named + where, pytrace=False)
        b, h, i = at
        pytest.fail(
            f"lse must be log(sum_j exp(s_ij)) over the visible keys of each row, with "
            f"s = q k^T / sqrt(d): lse at batch {b}, head {h}, query {i} is "
            f"{float(lse[at]):.10g}, expected {float(want_lse[at]):.10g} (relative error "
            f"{err:.3g} > {LSE_REL:g}){where}",
            pytrace=False,
        )


def _float32_precision(
    o: torch.Tensor, want: torch.Tensor, case: Case, err: float, tol: float, where: str
) -> None:
    """float64 inputs, and o off by float32 rounding nearly everywhere: the maths ran in
    float32. A mistake in the loops leaves the rows it does not touch exact in float64."""
    if case.q.dtype != torch.float64:
        return
    scale = max(1.0, float(want.abs().max()))
    typical = float((o.detach().double().cpu() - want.double().cpu()).abs().median())
    if err <= 1e-3 * scale and typical > 1e-11 * scale:
        pytest.fail(
            f"o is only as precise as float32 arithmetic: it is off by about {typical:.2g} "
            f"almost everywhere ({err:.3g} at worst, {tol:.3g} allowed for float64); compute "
            "in q's dtype: for float64 inputs keep the scores, m, l and the accumulator in "
            f"float64, do not convert to float32{where}",
            pytrace=False,
        )


def _query_tail(o: torch.Tensor, want: torch.Tensor, case: Case, tol: float, where: str) -> None:
    full = case.nq // case.block_q * case.block_q
    if not 0 < full < case.nq:
        return
    head_err, _ = worst(o[..., :full, :], want[..., :full, :])
    if head_err <= tol:
        pytest.fail(
            f"queries {full}..{case.nq - 1} of o are wrong while every other row is right: "
            f"they form the last partial query tile (Nq = {case.nq} is not a multiple of "
            f"block_q = {case.block_q}); loop over all Nq queries and let the last tile be "
            f"shorter{where}",
            pytrace=False,
        )


def upstream(case: Case, seed: int = 1) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    do = torch.randn(tuple(case.q.shape), generator=gen, dtype=torch.float64)
    return do.to(device=case.q.device, dtype=case.q.dtype)


def check_backward(fn: Fn, case: Case, what: str = "") -> None:
    """The user's gradients for the reference o and lse, against autograd in float64."""
    q, k, v = (x.double() for x in (case.q, case.k, case.v))
    o, lse = attention(q, k, v, case.causal)
    do = upstream(case)
    got = call_backward(fn, case, o.to(case.q.dtype), lse.to(case.q.dtype), do)
    want = gradients(q, k, v, do.double(), case.causal)
    where = f" ({case.describe()}{'; ' + what if what else ''})"
    tol = max(_tolerance(case, w) for w in want)
    errors = [worst(g, w) for g, w in zip(got, want, strict=True)]
    if all(err <= tol for err, _ in errors):
        return

    def formula(**knobs: Any) -> Triple:
        return gradients_by_formula(q, k, v, o, lse, do.double(), case.causal, **knobs)

    mistakes = [
        (
            "dk and dv are swapped: dV_j = sum_i P_ij^T dO_i and dK_j = scale * sum_i dS_ij^T "
            "Q_i; your dk matches dV and your dv matches dK",
            (want[0], want[2], want[1]),
        ),
        (
            "dS = P * (dP - D_i) needs D_i = rowsum(dO_i * O_i), computed once before the "
            "loops; your dq and dk match dS = P * dP, without the D_i term",
            formula(with_delta=False),
        ),
        (
            "dq and dk miss the softmax scale: dQ_i = scale * dS_ij K_j and dK_j = scale * "
            "dS_ij^T Q_i, with scale = 1/sqrt(d)",
            formula(scale_grads=False),
        ),
    ]
    if case.causal and case.nq != case.nk:
        mistakes.insert(
            0,
            (
                "the causal mask is aligned bottom-right: query i sees keys j <= i + Nk - Nq; "
                "your gradients match the top-left alignment j <= i",
                formula(align="top-left"),
            ),
        )
    for message, alt in mistakes:
        if all(worst(g, a)[0] <= tol for g, a in zip(got, alt, strict=True)) and any(
            worst(a, w)[0] > 10 * tol for a, w in zip(alt, want, strict=True)
        ):
            pytest.fail(message + where, pytrace=False)
    for label, g, (err, at) in zip(("dq", "dk", "dv"), got, errors, strict=True):
        if err > tol:
            w = want[("dq", "dk", "dv").index(label)]
            pytest.fail(
                f"{label} differs from autograd through {_mask_rule(case)}: {label}{list(at)} is "
                f"{float(g[at]):.10g}, expected {float(w[at]):.10g} (|difference| {err:.3g} > "
                f"{tol:.3g} allowed){where}",
                pytrace=False,
            )


def random_cases(count: int, seed: int, device: str) -> list[Case]:
    """Small random shapes and block sizes (1 included), smallest first."""
    gen = torch.Generator().manual_seed(seed)

    def pick(*options: int) -> int:
        return options[int(torch.randint(len(options), (1,), generator=gen))]

    cases = []
    for n in range(count):
        nq, nk = pick(1, 2, 3, 7, 12, 20, 33), pick(1, 2, 5, 9, 16, 31, 40)
        causal = bool(n % 2) and nq <= nk
        b, h, d = pick(1, 2), pick(1, 3), pick(4, 8, 16)
        bq, bk = pick(1, 2, 3, 5, 8, 13, 16), pick(1, 2, 3, 5, 8, 13, 16)
        cases.append(
            make_case(
                b,
                h,
                nq,
                nk,
                d,
                causal=causal,
                block_q=bq,
                block_k=bk,
                seed=seed + n,
                spread=2.0,
                device=device,
            )
        )
    return sorted(cases, key=lambda c: (c.q.numel() * c.nk, c.block_q + c.block_k))


def smallest_failure(cases: list[Case], check: Callable[[Case], None]) -> None:
    """Run ``check`` on every case; report the first (smallest) that fails, and how many did."""
    failed: list[str] = []
    for case in cases:
        try:
            check(case)
        except pytest.fail.Exception as exc:
            failed.append(str(exc.msg))
    if failed:
        pytest.fail(
            f"{len(failed)} of {len(cases)} random cases fail; the smallest: {failed[0]}",
            pytrace=False,
        )
