"""Grader for ``filter_probs(logits, temperature, top_k, top_p) -> [B, V]``.

Most specific first, so that the first failure names the broken rule: the interface and the
untouched inputs; temperature; greedy rows; top-k; the token that crosses top_p; top_p = 1
keeps every token; top-k before top-p; temperature before top-p; top_p compared exactly
(1e-12 either side); ties and a mass before equal to top_p; renormalisation; -inf logits;
then seeded random batches against the grader's per-row reference (float64); float32; on a
GPU, a full-size vocabulary. A wrong row whose own settings name another rule (top_k = 0,
the edge of a nucleus) is reported under that rule.
Every expected value comes from ``_sampling_reference`` (plain Python, one row at a time).
"""

from __future__ import annotations

from collections.abc import Callable

import _sampling_reference as ref
import pytest
import torch
from _cases import Batch, Rule, batch, call_filter, log_probs, mismatch, random_batch

Filter = Callable[..., torch.Tensor]

TEMPERATURE = (
    "temperature must divide the logits before the softmax and before the filters: "
    "p = softmax(logits / T)"
)
SMALL_T = (
    "only T = 0 is greedy: a small positive temperature such as 1e-6 still gives "
    "p = softmax(logits / T) (no threshold below which T counts as 0)"
)
GREEDY = (
    "temperature 0 is greedy: probability 1 on the largest logit (the lowest token id among "
    "equal maxima) and 0 elsewhere, whatever top_k and top_p say"
)
TOP_K = (
    "top-k must keep exactly the top_k most probable tokens, each row with its own top_k "
    "(top_k = 0 or >= V keeps all)"
)
K_ZERO = "top_k = 0 means off: keep all V tokens, as top_k = V does"
CROSSING = (
    "top-p keeps a token while the mass strictly before it (in descending order) is < top_p: "
    "the token that crosses top_p stays, every token after it goes"
)
EXACT = (
    "top-p compares the mass before a token with top_p exactly, with no tolerance, on the "
    "top-k survivors renormalised: top_p - 1e-12 before a token keeps it, top_p + 1e-12 "
    "drops it"
)
TOP_P_OFF = (
    "top_p = 1 turns the nucleus off: every token keeps its probability, however small (the "
    "running sum can reach 1.0 in floating point before the last token, so test top_p < 1 "
    "rather than rely on the mass before a token staying < 1)"
)
NEAR_ONE = (
    "only top_p = 1 turns the nucleus off: top_p = 0.99999 still cuts the tokens whose mass "
    "before them is >= top_p (no tolerance such as top_p >= 1 - 1e-5)"
)
TOP_P_PER_ROW = (
    "top_p is a per-row setting: a row with top_p = 1 keeps every token even when other rows "
    "of the batch cut a nucleus (test top_p < 1 per row, e.g. as a [B, 1] mask, not once for "
    "the whole batch with .any() or .min())"
)
ORDER = (
    "apply top-k before top-p: the nucleus is measured on the top-k survivors, renormalised, "
    "not on the full distribution"
)
TIES = (
    "ties at the top-k / top-p boundary go to the lower token id (a stable sort on descending "
    "probability; torch.topk does not promise which tied index it returns), and a token "
    "whose mass before it equals top_p exactly is dropped"
)
MINUS_INF = (
    "a logit of -inf is a token that is never drawn: probability exactly 0 after the softmax, "
    "and the finite logits are filtered as usual (every row has at least one)"
)
REFERENCE = "filter_probs differs from the grader's per-row reference"


def check(fn: Filter, case: Batch, rule: Rule, **tol: float) -> None:
    """The user's filter against the reference; ``rule`` names what a wrong row breaks (one
    for every row, or one per row), unless the row's settings point at another rule."""
    want = ref.rows(*case.args)
    problem = mismatch(call_filter(fn, case), want, case, rule, **tol)
    if problem is not None:
        row, message = problem
        pytest.fail(_k_zero(fn, case, row, want, tol) or message, pytrace=False)


def _k_zero(
    fn: Filter, case: Batch, row: int, want: list[ref.Row], tol: dict[str, float]
) -> str | None:
    """The message for a wrong row with top_k = 0 that comes out right with top_k = V."""
    vocab = case.logits.shape[1]
    if int(case.top_k[row]) != 0 or vocab == 1:
        return None
    k = torch.where(case.top_k == 0, torch.full_like(case.top_k, vocab), case.top_k)
    as_v = Batch(case.logits, case.temperature, k, case.top_p)
    try:
        got = call_filter(fn, as_v)
    except pytest.fail.Exception:
        return None
    if mismatch(got, want, as_v, K_ZERO, rows=[row], **tol) is not None:
        return None
    kept = int((call_filter(fn, case)[row] != 0).sum())
    return (
        f"{K_ZERO}. For {case.describe(row)}: {kept} of {vocab} tokens survive, and the same "
        f"row with top_k = {vocab} is right"
    )


# ---------------------------------------------------------------- interface


def test_interface_and_inputs_untouched(filter_probs: Filter, device: str) -> None:
    """Shape [B, V], the dtype and device of logits, finite; no input modified in place."""
    for dtype in (torch.float64, torch.float32):
        case = random_batch(5, 9, seed=1, device=device, dtype=dtype)
        call_filter(filter_probs, case)


# ---------------------------------------------------------------- one rule at a time


def test_temperature_scales_logits(filter_probs: Filter, device: str) -> None:
    gen = torch.Generator().manual_seed(2)
    z = (torch.randn(4, 7, generator=gen, dtype=torch.float64) * 2).tolist()
    check(filter_probs, batch(z, [0.3, 1.0, 2.0, 0.5], [0] * 4, [1.0] * 4, device), TEMPERATURE)


def test_temperature_zero_is_greedy(filter_probs: Filter, device: str) -> None:
    z = [[1.0, 5.0, 5.0, 2.0], [3.0, -1.0, 3.0, 3.0], [0.1, 0.4, -2.0, 0.3], [1.0, 5.0, 5.0, 2.0]]
    case = batch(z, [0.0, 0.0, 0.0, 1.0], [0, 3, 1, 0], [1.0, 0.5, 1e-6, 1.0], device)
    check(filter_probs, case, GREEDY)


def test_small_temperature_is_not_greedy(filter_probs: Filter, device: str) -> None:
    # logits / T = [0, -1, -3]: softmax ~[0.705, 0.259, 0.035], far from greedy's [1, 0, 0]
    z = [[0.0, -1e-6, -3e-6], [5.0, 5.0 - 2e-7, 4.0]]
    check(filter_probs, batch(z, [1e-6, 1e-7], [0, 0], [1.0, 1.0], device), SMALL_T)


def test_top_k_keeps_k_most_probable(filter_probs: Filter, device: str) -> None:
    gen = torch.Generator().manual_seed(3)
    z = torch.randn(7, 10, generator=gen, dtype=torch.float64) * 1.5
    temps = [1.0, 1.0, 0.3, 2.0, 1.0, 1.0, 1.0]
    case = batch(z, temps, [1, 3, 3, 9, 10, 15, 0], [1.0] * 7, device)
    check(filter_probs, case, TOP_K)


def test_top_p_keeps_the_crossing_token(filter_probs: Filter, device: str) -> None:
    z = log_probs(
        [0.5, 0.3, 0.15, 0.05],  # top_p 0.6: 0.5 is not enough, 0.3 crosses -> {0, 1}
        [0.1, 0.55, 0.05, 0.3],  # top_p 0.7: 0.55 then 0.3 crosses -> {1, 3}
        [0.2, 0.1, 0.3, 0.4],  # tiny top_p: the most probable token alone -> {3}
        [0.4, 0.3, 0.2, 0.1],  # top_p 0.95: the mass before the last is 0.9 -> all four
    )
    case = batch(z, [1.0] * 4, [0] * 4, [0.6, 0.7, 1e-6, 0.95], device)
    check(filter_probs, case, CROSSING)


def test_top_p_one_keeps_every_token(filter_probs: Filter, device: str) -> None:
    # the largest probability rounds to exactly 1.0, so the tail sits at "mass before" 1.0
    z = [[0.0, -40.0, -40.0, -40.0], [-40.0, 0.0, -45.0, -40.0]]
    check(filter_probs, batch(z, [1.0, 1.0], [0, 3], [1.0, 1.0], device), TOP_P_OFF)
    z = [[0.0, -20.0, -20.0, -20.0]]  # in float32 the same happens to tails of 2e-9
    case = batch(z, [1.0], [0], [1.0], device, torch.float32)
    check(filter_probs, case, TOP_P_OFF, atol=1e-6, sum_tol=1e-5)


def test_top_p_just_below_one_still_cuts(filter_probs: Filter, device: str) -> None:
    # p ~ [0.999999, 1e-6, ...]: the mass before token 1 is 0.999999 >= 0.99999 -> {0}
    z = log_probs([0.999999, 6e-7, 4e-7], [0.5, 0.3, 0.2])
    case = batch(z, [1.0, 1.0], [0, 0], [0.99999, 0.999999], device)
    check(filter_probs, case, [NEAR_ONE, CROSSING])


def test_top_p_one_is_decided_per_row(filter_probs: Filter, device: str) -> None:
    # rows with top_p = 1 next to rows with a nucleus: a test taken once for the whole batch
    # (`if (top_p < 1).any():`, `top_p.min() < 1`) cuts the top_p = 1 rows too, and their
    # tails sit at "mass before" 1.0
    z = [[0.0, -40.0, -40.0, -40.0], [0.4, 0.3, 0.2, 0.1], [-40.0, 0.0, -45.0, -40.0]]
    case = batch(z, [1.0, 1.0, 1.0], [0, 0, 3], [1.0, 0.5, 1.0], device)
    check(filter_probs, case, [TOP_P_PER_ROW, CROSSING, TOP_P_PER_ROW])


def test_top_k_before_top_p(filter_probs: Filter, device: str) -> None:
    # each distribution first with top-p alone and top-k alone, then with both
    z = log_probs(
        # top-k 2 keeps 0.4 and 0.3 -> renormalised 0.57, 0.43; top_p 0.5 keeps token 1 only
        # (nucleus first on the full distribution would keep tokens 1 and 3)
        [0.2, 0.4, 0.1, 0.3],
        [0.35, 0.3, 0.2, 0.15],  # top-k 3, top_p 0.6 -> {0, 1}
    )
    case = batch(z * 3, [1.0] * 6, [0, 0, 2, 3, 2, 3], [0.5, 0.6, 1.0, 1.0, 0.5, 0.6], device)
    check(filter_probs, case, [CROSSING] * 2 + [TOP_K] * 2 + [ORDER] * 2)


def test_temperature_before_top_p(filter_probs: Filter, device: str) -> None:
    # T = 3 flattens [0.6, 0.25, 0.15] to ~[0.42, 0.31, 0.27]: the nucleus for 0.75 grows
    # from 2 tokens (T = 1, the first row) to all 3, so T must act before the filter
    z = log_probs([0.6, 0.25, 0.15], [0.6, 0.25, 0.15])
    case = batch(z, [1.0, 3.0], [0, 0], [0.75, 0.75], device)
    check(filter_probs, case, [CROSSING, TEMPERATURE])


def test_top_p_compares_exactly(filter_probs: Filter, device: str) -> None:
    """float64 masses before a token 1e-12 below and above top_p: rounding is ~1e-16 here, so
    only a tolerance in the comparison changes the result."""
    d = 1e-12
    z = log_probs(
        [0.9 - d, 0.06 + d, 0.04],  # top_p 0.9: token 1 has 0.9 - 1e-12 before it -> {0, 1}
        [0.9 + d, 0.06 - d, 0.04],  # 0.9 + 1e-12 before token 1 -> {0}
        [0.5, 0.3 - d, 0.2 + d],  # top_p 0.8: token 2 has 0.8 - 1e-12 before it -> all
        [0.5, 0.3 + d, 0.2 - d],  # 0.8 + 1e-12 before token 2 -> {0, 1}
    )
    check(filter_probs, batch(z, [1.0] * 4, [0] * 4, [0.9, 0.9, 0.8, 0.8], device), EXACT)
    # the same after top-k 2: 0.9 -+ 1e-12 of the two survivors' mass
    z = log_probs([0.9 - d, 0.1 + d, 0.08, 0.05], [0.9 + d, 0.1 - d, 0.08, 0.05])
    check(filter_probs, batch(z, [1.0, 1.0], [2, 2], [0.9, 0.9], device), EXACT)


@pytest.mark.parametrize(
    ("logits", "top_k", "top_p"),
    [
        ([[1, 3, 3, 3, 0, 3]] * 3, [2, 4, 0], [1.0, 1.0, 1.0]),  # -> {1, 2}, {1, 2, 3, 5}, all
        ([[3] * 6, [0, 2, 0, 0, 0, 0]], [3, 3], [1.0, 1.0]),  # -> {0, 1, 2}, {1, 0, 2}
        ([[0] * 4, [0] * 4], [0, 0], [0.5, 0.3]),  # 0.25 each -> {0, 1}, {0, 1}
        ([[0] * 8, [0] * 8], [0, 0], [0.3, 0.25]),  # 0.125 each -> {0, 1, 2}, {0, 1}
        ([[2, 0, 2, 2, 2]], [2], [0.5]),  # top-k {0, 2} -> 0.5 each; top_p 0.5 -> {0}
        # more than 16 tokens: where a CPU's unstable sort stops keeping tied ids in order
        ([[0] * 32, [0] * 32], [3, 0], [1.0, 0.1]),  # -> {0, 1, 2}; 1/32 each -> {0, 1, 2, 3}
        ([[1] * 20 + [3] * 12], [14], [1.0]),  # the twelve 3s, then the 1s at ids 0 and 1
        # different logits, the same probability in float64: exp(0 - 1e-300) == exp(0); the
        # rank is by p, so the tie goes to token 0 (a rank by logit would keep token 1)
        ([[0.0, 1e-300]], [1], [1.0]),
    ],
    ids=[
        "top-k",
        "top-k-below-max",
        "top-p-quarters",
        "top-p-eighths",
        "top-k-then-top-p",
        "wide-top-k-top-p",
        "wide-top-k-below-max",
        "equal-p-distinct-logits",
    ],
)
def test_ties_go_to_lower_token_id(
    filter_probs: Filter,
    device: str,
    logits: list[list[float]],
    top_k: list[int],
    top_p: list[float],
) -> None:
    case = batch(logits, [1.0] * len(top_k), top_k, top_p, device)
    check(filter_probs, case, TIES)


def test_rows_renormalised(filter_probs: Filter, device: str) -> None:
    gen = torch.Generator().manual_seed(4)
    z = torch.randn(4, 12, generator=gen, dtype=torch.float64)
    case = batch(z, [1.0, 0.7, 1.0, 2.0], [4, 0, 6, 2], [1.0, 0.6, 0.8, 0.9], device)
    check(filter_probs, case, REFERENCE)


def test_minus_inf_logits(filter_probs: Filter, device: str) -> None:
    """-inf marks a banned token; greedy rows, top-k larger than the finite tokens, top-p."""
    inf = float("-inf")
    z = [[0.0, inf, 1.0, inf, 0.5]] * 4 + [[inf, inf, 2.0, inf, inf]] * 2
    temps = [1.0, 0.5, 0.0, 1.0, 2.0, 1.0]
    case = batch(z, temps, [0, 4, 0, 0, 0, 2], [1.0, 1.0, 1.0, 0.7, 0.5, 1.0], device)
    check(filter_probs, case, MINUS_INF)
    # a high temperature: a stand-in such as -1e4 for -inf becomes -100 at T = 100, and then
    # a probability of 4e-44, not 0
    z = [[0.0, inf, 1.0], [inf, 0.0, 0.5]]
    check(filter_probs, batch(z, [100.0, 1000.0], [0, 0], [1.0, 1.0], device), MINUS_INF)


# ---------------------------------------------------------------- everything at once


RANDOM = [
    # (B, V, seed, ties)
    (4, 1, 10, False),
    (6, 2, 11, False),
    (8, 7, 12, False),
    (8, 7, 13, True),
    (8, 50, 14, False),
    (8, 50, 15, True),
    (6, 1000, 16, False),
    (6, 1000, 17, True),
    (2, 5000, 18, False),
]


@pytest.mark.parametrize(
    ("b", "v", "seed", "ties"),
    RANDOM,
    ids=[f"B{b}-V{v}{'-ties' if t else ''}" for b, v, _, t in RANDOM],
)
def test_matches_reference(
    filter_probs: Filter, device: str, b: int, v: int, seed: int, ties: bool
) -> None:
    """Mixed per-row parameters: T in {0, 0.3, 1, 2}, top_k in {0, 1, 3, V, V + 5},
    top_p in {1, 0.9, 0.5, 1e-6}."""
    check(filter_probs, random_batch(b, v, seed, device, ties=ties), REFERENCE)


def test_float32(filter_probs: Filter, device: str) -> None:
    case = random_batch(8, 1000, 20, device, dtype=torch.float32, margin=1e-4)
    check(filter_probs, case, REFERENCE, atol=2e-5, sum_tol=1e-4, tiny=1e-30)


@pytest.mark.cuda
def test_cuda_full_vocabulary_float32(filter_probs: Filter, device: str) -> None:
    """A 32,000-token vocabulary in float32 on the GPU against the float64 reference."""
    case = random_batch(8, 32000, 21, device, dtype=torch.float32, scale=2.0, margin=1e-4)
    check(filter_probs, case, REFERENCE, atol=2e-5, sum_tol=1e-4, tiny=1e-30)
    # nuclei of thousands of tokens: float32 sums may move the boundary by a token or two,
    # so compare whole distributions (total variation) and the nucleus size
    z = torch.randn(4, 32000, generator=torch.Generator().manual_seed(22))
    wide = batch(
        z, [1.0, 2.0, 1.0, 2.0], [0, 0, 5000, 20000], [0.9, 0.5, 0.9, 0.95], device, torch.float32
    )
    got, want = call_filter(filter_probs, wide), ref.filter_probs(*wide.args)
    for row in range(4):
        tv = 0.5 * float((got[row] - want[row]).abs().sum())
        kept, expected = int((got[row] > 0).sum()), int((want[row] > 0).sum())
        assert tv <= 1e-3 and abs(kept - expected) <= 0.01 * expected, (
            f"{REFERENCE} on the GPU in float32. For {wide.describe(row)}: total variation "
            f"distance {tv:.2e} (at most 1e-3 allowed), {kept} tokens kept, expected {expected}"
        )
