"""Grader for ``verify(draft_tokens, q, p, generator=None) -> (tokens, lengths)``.

Most specific first, so that the first failure names the broken rule: the output form and
the untouched inputs; the bonus token comes from p[K]; certain acceptance when p >= q at
the drafted token; a draft token the target gives probability 0 is always rejected; the row
stops at the first rejection; the resampled token comes from the residual
norm(max(0, p - q)); p == q everywhere; the generator; then, over 20,000 rows per
configuration, the joint distribution of the first two emitted tokens and the mean length
against their exact values.

The frequency test bounds each cell's count with the Chernoff (relative entropy) tail,
P(count this far from n * w) <= exp(-n * KL(f || w)) on each side, which holds for every
cell size, including cells with an expected count far below 1 (a normal approximation
there fails a correct solution on a single legitimate hit). With a Bonferroni sum over all
cells and both tails, a correct solution fails it with probability below ALPHA.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch

Verify = Callable[..., tuple[torch.Tensor, torch.Tensor]]

CERTAIN = (
    "a draft token with p(x) >= q(x) is accepted with certainty: accept with probability "
    "min(1, p(x) / q(x)), i.e. keep x when u < p(x) / q(x) for u uniform in [0, 1)"
)
ZERO_TARGET = "a draft token whose target probability p(x) is 0 is always rejected"
FIRST_REJECTION = (
    "stop at the first rejection: later draft tokens are dropped even when they would be accepted"
)
BONUS = (
    "when all K draft tokens are accepted, emit one bonus token drawn from p[K], the target's "
    "distribution after the last draft token (not p[K-1]); lengths is then K+1"
)
RESIDUAL = (
    "at a rejection, resample from the residual norm(max(0, p - q)): a token where "
    "p <= q is never resampled"
)
EQUAL = "when p == q at a position the residual is all zero: draw from p there"
GENERATOR = "all randomness must come from the given generator: same seed, same output"
DISTRIBUTION = "output distribution differs from the target's (binomial tail test)"
LENGTH = "mean number of emitted tokens differs from 1 + a0 + a0*a1 + ... beyond 5 standard errors"


def call(fn: Verify, draft: torch.Tensor, q: torch.Tensor, p: torch.Tensor, seed: int = 0):
    """The user's result on the CPU after checking its form and that inputs are unchanged."""
    saved = [t.clone() for t in (draft, q, p)]
    gen = torch.Generator(device=p.device).manual_seed(seed)
    try:
        out = fn(draft, q, p, generator=gen)
    except NotImplementedError as exc:
        pytest.fail(f"verify is not implemented yet (NotImplementedError: {exc})", pytrace=False)
    except Exception as exc:
        pytest.fail(f"verify raised {type(exc).__name__}: {exc}", pytrace=False)
    for before, after, name in zip(saved, (draft, q, p), ("draft_tokens", "q", "p"), strict=True):
        assert torch.equal(before, after), f"verify modified {name} in place"
    assert isinstance(out, tuple) and len(out) == 2, "verify must return (tokens, lengths)"
    tokens, lengths = out
    b, k = draft.shape
    assert tuple(tokens.shape) == (b, k + 1), (
        f"tokens has shape {tuple(tokens.shape)}, expected ({b}, {k + 1})"
    )
    assert tuple(lengths.shape) == (b,), (
        f"lengths has shape {tuple(lengths.shape)}, expected ({b},)"
    )
    assert tokens.dtype == torch.int64 and lengths.dtype == torch.int64, (
        "tokens and lengths must be torch.int64"
    )
    assert tokens.device == p.device and lengths.device == p.device, (
        "tokens and lengths must be on the device of p"
    )
    tokens, lengths = tokens.cpu(), lengths.cpu()
    assert bool(((lengths >= 1) & (lengths <= k + 1)).all()), (
        "every row emits between 1 and K+1 tokens (the accepted prefix plus exactly one more)"
    )
    pos = torch.arange(k + 1)
    inside = pos < lengths[:, None]
    assert bool((tokens[~inside] == -1).all()), "positions at and after lengths must be -1"
    v = p.shape[-1]
    assert bool(((tokens[inside] >= 0) & (tokens[inside] < v)).all()), (
        f"emitted token ids must lie in [0, {v})"
    )
    accepted = pos[:k] < (lengths[:, None] - 1)
    assert bool((tokens[:, :k][accepted] == draft.cpu()[accepted]).all()), (
        "the first lengths-1 tokens must be the accepted draft tokens, unchanged"
    )
    return tokens, lengths


def one_hot(index: int, v: int) -> list[float]:
    return [1.0 if i == index else 0.0 for i in range(v)]


def rows(n: int, *t: list) -> torch.Tensor:
    return torch.tensor([t] * n, dtype=torch.float64, device=DEVICE[0])


DEVICE = ["cpu"]


@pytest.fixture(autouse=True)
def _device(device: str) -> None:
    DEVICE[0] = device


def test_form_and_inputs_untouched(verify: Verify) -> None:
    gen = torch.Generator().manual_seed(5)
    p = torch.softmax(torch.randn(6, 4, 7, generator=gen, dtype=torch.float64), -1)
    q = torch.softmax(torch.randn(6, 3, 7, generator=gen, dtype=torch.float64), -1)
    draft = torch.multinomial(q.reshape(-1, 7), 1, generator=gen).reshape(6, 3)
    dev = DEVICE[0]
    call(verify, draft.to(dev), q.to(dev), p.to(dev))
    call(verify, draft.to(dev), q.float().to(dev), p.float().to(dev))


def test_bonus_token_from_last_target_position(verify: Verify) -> None:
    n = 200
    q = rows(n, one_hot(1, 5), one_hot(2, 5))
    p = rows(n, one_hot(1, 5), one_hot(2, 5), one_hot(4, 5))
    draft = torch.tensor([[1, 2]] * n, device=DEVICE[0])
    tokens, lengths = call(verify, draft, q, p)
    assert bool((lengths == 3).all()) and bool((tokens[:, 2] == 4).all()), (
        f"{BONUS}; got lengths {lengths[:3].tolist()}, last tokens {tokens[:3, -1].tolist()}"
    )


def test_p_at_least_q_is_accepted(verify: Verify) -> None:
    # p > q at every drafted token: every row keeps all three, then the bonus from p[3]
    n = 500
    q = rows(n, [0.5, 0.3, 0.2, 0.0], [0.1, 0.6, 0.3, 0.0], [0.2, 0.2, 0.6, 0.0])
    p = rows(n, [0.7, 0.1, 0.1, 0.1], [0.1, 0.8, 0.1, 0.0], [0.2, 0.1, 0.7, 0.0], one_hot(3, 4))
    draft = torch.tensor([[0, 1, 2]] * n, device=DEVICE[0])
    _, lengths = call(verify, draft, q, p)
    assert bool((lengths == 4).all()), (
        f"{CERTAIN} ({int((lengths < 4).sum())} of {n} rows stopped early)"
    )


def test_zero_target_probability_is_rejected(verify: Verify) -> None:
    n = 500
    q = rows(n, [0.1, 0.9, 0.0, 0.0])
    p = rows(n, [0.0, 0.5, 0.5, 0.0], one_hot(3, 4))
    draft = torch.zeros((n, 1), dtype=torch.int64, device=DEVICE[0])
    _, lengths = call(verify, draft, q, p)
    assert bool((lengths == 1).all()), f"{ZERO_TARGET} ({int((lengths > 1).sum())} of {n} kept it)"


def test_stops_at_first_rejection(verify: Verify) -> None:
    n = 500
    q = rows(n, [0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0])
    p = rows(n, [0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], one_hot(0, 3))
    draft = torch.tensor([[0, 1, 2]] * n, device=DEVICE[0])
    _, lengths = call(verify, draft, q, p)
    assert bool((lengths == 1).all()), f"{FIRST_REJECTION} (position 0 is always rejected here)"


def test_resample_from_residual(verify: Verify) -> None:
    # draft 0 kept with probability 0.5 / 0.9; the residual max(0, p - q) is all on token 1
    n = 2000
    q = rows(n, [0.9, 0.1, 0.0, 0.0])
    p = rows(n, [0.5, 0.5, 0.0, 0.0], one_hot(3, 4))
    draft = torch.zeros((n, 1), dtype=torch.int64, device=DEVICE[0])
    tokens, lengths = call(verify, draft, q, p)
    rejected = lengths == 1
    assert int(rejected.sum()) > 0, f"{CERTAIN}: here p(0) / q(0) = 0.56, so some rows reject"
    got = tokens[rejected, 0]
    assert bool((got == 1).all()), (
        f"{RESIDUAL}: here the residual is all on token 1, "
        f"got {torch.bincount(got, minlength=4).tolist()}"
    )


def test_equal_distributions(verify: Verify) -> None:
    # p == q: every draft token is kept; p == q == 0 at a drafted token rejects it, and the
    # all-zero residual falls back to p
    n = 200
    dist = [0.25, 0.25, 0.5, 0.0]
    q = rows(n, dist, dist)
    p = rows(n, dist, dist, one_hot(0, 4))
    draft = torch.tensor([[2, 3]] * n, device=DEVICE[0])
    tokens, lengths = call(verify, draft, q, p)
    assert bool((lengths == 2).all()), f"{ZERO_TARGET} (a token with p = q = 0 included)"
    assert bool((tokens[:, 1] != 3).all()), f"{EQUAL}: token 3 has p = 0 and was emitted"


def test_uses_generator(verify: Verify) -> None:
    gen = torch.Generator().manual_seed(9)
    p = torch.softmax(torch.randn(2000, 3, 6, generator=gen, dtype=torch.float64), -1)
    q = torch.softmax(torch.randn(2000, 2, 6, generator=gen, dtype=torch.float64), -1)
    draft = torch.multinomial(q.reshape(-1, 6), 1, generator=gen).reshape(2000, 2)
    dev = DEVICE[0]
    a = call(verify, draft.to(dev), q.to(dev), p.to(dev), seed=3)
    torch.manual_seed(1)
    b = call(verify, draft.to(dev), q.to(dev), p.to(dev), seed=3)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]), GENERATOR


# (K, V, seed): p and q fixed per configuration, the same for every row
CONFIGS = [(1, 4, 11), (2, 6, 12), (3, 8, 13)]
ROWS = 20_000
# every cell tested: V for the first token plus V * (V + 1) for the first two, per config
CELLS = sum(v + v * (v + 1) for _, v, _ in CONFIGS)
ALPHA = 1e-4  # bound on the probability that a correct solution fails the frequency test
# a cell fails when ROWS * KL(frequency || expected) exceeds this; two tails per cell
THRESHOLD = math.log(2 * CELLS / ALPHA)


def _dists(k: int, v: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    p = torch.rand(k + 1, v, generator=gen, dtype=torch.float64) ** 2
    q = torch.rand(k, v, generator=gen, dtype=torch.float64) ** 2
    p[0, 0] = 0.0  # a token the target never emits
    q[0, 1] = 0.0  # a token the draft never proposes
    return p / p.sum(-1, keepdim=True), q / q.sum(-1, keepdim=True)


@pytest.mark.parametrize(("k", "v", "seed"), CONFIGS, ids=[f"K{c[0]}-V{c[1]}" for c in CONFIGS])
def test_output_distribution_is_the_target(verify: Verify, k: int, v: int, seed: int) -> None:
    """The first emitted token is distributed as p[0]; jointly with the second,
    P(t0 = x, t1 = y) = min(p0, q0)(x) * p1(y), and P(t0 = x, only one token) =
    p0(x) - min(p0, q0)(x). Each cell's count passes the Chernoff tail test (see the module
    docstring): a correct solution fails any of them with probability below ALPHA."""
    p, q = _dists(k, v, seed)
    gen = torch.Generator().manual_seed(seed + 100)
    draft = torch.multinomial(q, ROWS, replacement=True, generator=gen).T  # [ROWS, K]
    dev = DEVICE[0]
    tokens, lengths = call(
        verify,
        draft.contiguous().to(dev),
        q.expand(ROWS, k, v).to(dev),
        p.expand(ROWS, k + 1, v).to(dev),
        seed=seed,
    )
    first = torch.bincount(tokens[:, 0], minlength=v).double()
    _within(first, p[0], f"{DISTRIBUTION}: the first token against p[0]")
    keep = torch.minimum(p[0], q[0])
    want = torch.cat([keep[:, None] * p[1][None, :], (p[0] - keep)[:, None]], dim=1)
    second = torch.where(tokens[:, 1] < 0, torch.full_like(tokens[:, 1], v), tokens[:, 1])
    joint = torch.bincount(tokens[:, 0] * (v + 1) + second, minlength=v * (v + 1)).double()
    _within(joint.view(v, v + 1), want, f"{DISTRIBUTION}: the first two tokens")
    alpha = keep.new_tensor([float(torch.minimum(p[i], q[i]).sum()) for i in range(k)])
    expect = 1 + float(torch.cumprod(alpha, 0).sum())
    mean = float(lengths.double().mean())
    se = float(lengths.double().std()) / math.sqrt(ROWS)
    assert abs(mean - expect) <= 5 * se + 1e-9, f"{LENGTH}: mean {mean:.4f}, expected {expect:.4f}"


def excess(counts: torch.Tensor, want: torch.Tensor) -> torch.Tensor:
    """ROWS * KL(f || w) per cell, f = counts / ROWS: the Chernoff exponent of a count this
    far from its expectation (infinite for a hit on a cell of probability 0)."""
    f = counts.double() / ROWS
    w = want.double()
    kl = (
        torch.xlogy(f, f)
        - torch.xlogy(f, w)
        + torch.xlogy(1 - f, 1 - f)
        - torch.xlogy(1 - f, 1 - w)
    )
    return ROWS * kl.clamp_min(0)


def _within(counts: torch.Tensor, want: torch.Tensor, what: str) -> None:
    score = excess(counts, want)
    if bool((score > THRESHOLD).any()):
        cell = tuple(int(i) for i in (score == score.max()).nonzero()[0])
        exponent = float(score[cell])
        if float(want[cell]) == 0:
            odds = "0 (the cell has probability 0)"
        elif exponent < 700:
            odds = f"below {math.exp(-exponent):.1e}"
        else:
            odds = f"below exp(-{exponent:.0f})"
        pytest.fail(
            f"{what}: cell {cell} was hit {int(counts[cell])} times in {ROWS} rows, "
            f"expected {ROWS * float(want[cell]):.1f} (probability {float(want[cell]):.4g}); "
            f"a correct solution is this far off with probability {odds}",
            pytrace=False,
        )
