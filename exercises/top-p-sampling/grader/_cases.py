"""Building and describing batches for the grader, and calling the user's filter safely."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import _sampling_reference as ref
import pytest
import torch
from _diagnose import boundary

NAMES = ("logits", "temperature", "top_k", "top_p")


@dataclass(frozen=True)
class Batch:
    """One call's inputs, already on the device under test."""

    logits: torch.Tensor  # [B, V]
    temperature: torch.Tensor  # [B]
    top_k: torch.Tensor  # [B] int64
    top_p: torch.Tensor  # [B]

    @property
    def args(self) -> tuple[torch.Tensor, ...]:
        return (self.logits, self.temperature, self.top_k, self.top_p)

    def summary(self) -> str:
        b, v = self.logits.shape
        return f"B={b}, V={v}, {str(self.logits.dtype).removeprefix('torch.')}"

    def describe(self, row: int) -> str:
        """The inputs of one row, short enough for a one-line failure message."""
        z = self.logits[row].double().cpu().tolist()
        shown = ", ".join(f"{x:.4g}" for x in z[:8]) + (
            f", ... ({len(z)} values)" if len(z) > 8 else ""
        )
        t = float(self.temperature[row])
        text = (
            f"row {row} of {self.summary()}: T={t:g}, top_k={int(self.top_k[row])}, "
            f"top_p={float(self.top_p[row]):g}, logits=[{shown}]"
        )
        if t > 0 and len(z) <= 8:  # small rows: the probabilities the filters see
            probs = torch.softmax(torch.tensor(z, dtype=torch.float64) / t, dim=0).tolist()
            text += " (softmax(logits / T) = [" + ", ".join(f"{p:.4g}" for p in probs) + "])"
        return text


def batch(
    logits: Sequence[Sequence[float]] | torch.Tensor,
    temperature: Sequence[float],
    top_k: Sequence[int],
    top_p: Sequence[float],
    device: str,
    dtype: torch.dtype = torch.float64,
) -> Batch:
    z = logits if isinstance(logits, torch.Tensor) else torch.tensor(logits, dtype=torch.float64)
    return Batch(
        z.to(device=device, dtype=dtype),
        torch.tensor(temperature, dtype=dtype, device=device),
        torch.tensor(top_k, dtype=torch.int64, device=device),
        torch.tensor(top_p, dtype=dtype, device=device),
    )


def log_probs(*rows: Sequence[float]) -> list[list[float]]:
    """Logits whose softmax at T = 1 is the given distribution (up to rounding)."""
    return [[math.log(p) for p in row] for row in rows]


def random_batch(
    b: int,
    v: int,
    seed: int,
    device: str,
    dtype: torch.dtype = torch.float64,
    ties: bool = False,
    scale: float = 2.0,
    margin: float = 1e-9,
) -> Batch:
    """Per-row random parameters; a row whose top-p decision lies within ``margin`` of top_p
    is drawn again, so rounding can never decide which tokens survive."""
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    rows, temps, ks, ps = [], [], [], []
    while len(rows) < b:
        if ties:  # small integers: many exactly equal logits
            z = torch.randint(-3, 4, (v,), generator=gen).double()
        else:
            z = torch.randn(v, generator=gen, dtype=torch.float64) * scale
        z = z.to(dtype).double()  # exactly representable in the dtype under test
        t = float(torch.tensor(rng.choice([0.0, 0.3, 1.0, 2.0]), dtype=dtype))
        k = rng.choice([0, 0, 1, 3, v, v + 5])
        p = float(torch.tensor(rng.choice([1.0, 0.9, 0.9, 0.5, 1e-6]), dtype=dtype))
        if ref.filter_row(z.tolist(), t, k, p).margin < margin:
            continue
        rows.append(z)
        temps.append(t)
        ks.append(k)
        ps.append(p)
    return batch(torch.stack(rows), temps, ks, ps, device, dtype)


_IN_PLACE_ADVICE = {
    "logits": "logits / T, not logits.div_(T)",
    "temperature": "a new tensor for the safe temperatures, not temperature.clamp_(...)",
    "top_k": "torch.where(top_k == 0, V, top_k).clamp(max=V), not top_k.clamp_(...)",
    "top_p": "a new mask from top_p < 1, not top_p.clamp_(...)",
}


def call_filter(fn: Callable[..., torch.Tensor], case: Batch) -> torch.Tensor:
    """The user's result as float64 on the CPU, after checking its form and the inputs."""
    before = [x.clone() for x in case.args]
    try:
        out = fn(*case.args)
    except NotImplementedError as exc:
        pytest.fail(
            f"filter_probs is not implemented yet (NotImplementedError: {exc})", pytrace=False
        )
    except Exception as exc:
        pytest.fail(
            f"filter_probs raised {type(exc).__name__}: {exc} ({case.summary()})", pytrace=False
        )
    for name, old, new in zip(NAMES, before, case.args, strict=True):
        if not torch.equal(old, new):
            pytest.fail(
                f"filter_probs modified its input `{name}` in place ({case.summary()}): "
                f"compute on new tensors ({_IN_PLACE_ADVICE.get(name, 'no in-place ops')})",
                pytrace=False,
            )
    if not isinstance(out, torch.Tensor):
        pytest.fail(f"filter_probs must return a torch.Tensor, got {type(out).__name__}")
    shape = tuple(case.logits.shape)
    assert tuple(out.shape) == shape, (
        f"filter_probs returned shape {tuple(out.shape)}, expected {shape} ({case.summary()})"
    )
    assert out.dtype == case.logits.dtype, (
        f"filter_probs returned dtype {out.dtype}, expected the dtype of logits "
        f"({case.logits.dtype})"
    )
    assert out.device == case.logits.device, (
        f"filter_probs returned a tensor on {out.device}, logits are on {case.logits.device}"
    )
    bad = ~torch.isfinite(out)
    if bool(bad.any()):
        row = int(bad.nonzero()[0, 0])
        pytest.fail(
            f"filter_probs returned NaN or inf for {case.describe(row)}{_nan_hint(case, row)}",
            pytrace=False,
        )
    return out.detach().double().cpu()


def _nan_hint(case: Batch, row: int) -> str:
    """What usually makes a row NaN: no survivor to renormalise, or a division by T = 0."""
    if float(case.temperature[row]) == 0:
        return ": a greedy row must not divide by T = 0 (divide by 1 and pick the argmax)"
    if int(case.top_k[row]) == 0:
        return ": top_k = 0 means off (keep all V tokens), not 'keep none'"
    return ""


def _ids(indices: list[int]) -> str:
    return str(indices) if len(indices) <= 10 else f"{indices[:10]} ... ({len(indices)} tokens)"


Rule = str | Sequence[str]  # one for every row, or one per row


def mismatch(
    got: torch.Tensor,
    want: list[ref.Row],
    case: Batch,
    rule: Rule,
    atol: float = 1e-10,
    sum_tol: float = 1e-9,
    tiny: float = 0.0,
    rows: Sequence[int] | None = None,
) -> tuple[int, str] | None:
    """The first row (of ``rows``, default all) that differs from the reference, and the
    message: the same surviving tokens (removed ones exactly 0), a sum of 1, the same values.
    ``tiny``: reference probabilities below it may come back as 0 (float32 underflow)."""
    for row in range(got.shape[0]) if rows is None else rows:
        message = _row_mismatch(got[row], want[row], case, row, rule, atol, sum_tol, tiny)
        if message is not None:
            return row, message
    return None


def _row_mismatch(
    g: torch.Tensor,
    ref_row: ref.Row,
    case: Batch,
    row: int,
    rule: Rule,
    atol: float,
    sum_tol: float,
    tiny: float,
) -> str | None:
    w = torch.tensor(ref_row.probs, dtype=torch.float64)
    why = rule if isinstance(rule, str) else rule[row]
    unsure = (w > 0) & (w < tiny)
    has = [int(i) for i in ((g != 0) & ~unsure).nonzero().flatten()]
    wants = [int(i) for i in ((w != 0) & ~unsure).nonzero().flatten()]
    if has != wants:
        settings = (float(case.temperature[row]), int(case.top_k[row]), float(case.top_p[row]))
        named = boundary(has, ref_row, *settings, case.describe(row))
        if named is not None:
            return named
        missing = sorted(set(wants) - set(has))
        extra = sorted(set(has) - set(wants))
        diff = [f"missing {_ids(missing)}"] if missing else []
        diff += [f"should be exactly 0: {_ids(extra)}"] if extra else []
        return (
            f"{why}. For {case.describe(row)}: expected nonzero probability on tokens "
            f"{_ids(wants)}, got {_ids(has)} ({'; '.join(diff)})"
        )
    total = float(g.sum())
    if abs(total - 1.0) > sum_tol:
        off = f"the row sums to 1 {'+' if total > 1 else '-'} {abs(total - 1.0):.2g}"
        if abs(total - 1.0) < ROUNDING_SUM and case.logits.dtype == torch.float64:
            return (
                f"{off} for {case.describe(row)}, off by float32 rounding (at most "
                f"{sum_tol:g} allowed in float64): compute in float64 throughout (no "
                ".float() in between) and renormalise after the last filter"
            )
        return (
            f"the filtered probabilities are not renormalised: for {case.describe(row)} "
            f"{off}, expected 1 (divide the surviving probabilities by their sum after "
            "filtering)"
        )
    err = (g - w).abs()
    worst = float(err.max())
    if worst > atol:
        i = int(err.argmax())
        values = (
            f"token {i} has probability {float(g[i]):.12g}, expected {float(w[i]):.12g} "
            f"(|difference| {worst:.2g} > {atol:g} allowed)"
        )
        if worst < PRECISION_LEVEL:
            return precision_message(case, row, values)
        return f"{why}. For {case.describe(row)}: {values}"
    return None


# A float64 row that misses 1 by less than this is off by float32 rounding, not by a
# filter that forgot to renormalise (which leaves out a whole token's mass).
ROUNDING_SUM = 1e-6

# Below this difference, with the right tokens surviving, no rule is broken: the arithmetic
# lost precision (every rule of the filter moves some probability by far more).
PRECISION_LEVEL = 1e-4


def precision_message(case: Batch, row: int, values: str) -> str:
    """The right tokens survive but a value is off by rounding: name the precision, not a
    rule."""
    dtype = str(case.logits.dtype).removeprefix("torch.")
    return (
        f"the right tokens survive, but the values are less precise than {dtype} allows. For "
        f"{case.describe(row)}: {values}. Compute in the dtype of logits ({dtype} here): no "
        ".float(), .half() or float32 tensors in between"
    )
