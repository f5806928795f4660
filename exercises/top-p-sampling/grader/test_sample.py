"""Grader for ``sample(logits, temperature, top_k, top_p, generator=None) -> [B]``.

The interface; only tokens with a nonzero filtered probability are drawn; over many draws
the frequencies match the grader's reference distribution within 5 binomial standard
deviations (greedy rows always give the argmax); the same generator seed gives the same
tokens. Each row of a batch is one draw, so 40,000 draws take a single call: few enough for
a solution that loops over the rows (allowed) to finish in seconds, and enough that a
sampler off by a few percent on any token fails (the bound is about +-0.02 at p = 0.3).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import _sampling_reference as ref
import pytest
import torch
from _cases import Batch, batch, random_batch

Sample = Callable[..., torch.Tensor]
# per configuration: with 24 (configuration, token) cells at 5 standard deviations each, a
# correct sampler fails with probability below 24 * 5.7e-7 (Bonferroni); a token whose
# frequency is off by more than 0.025 fails whatever its probability
DRAWS = 10_000
LOGITS = [2.0, 1.5, 0.3, 1.0, -1.0, 0.8]
CONFIGS = [  # (T, top_k, top_p)
    (1.0, 0, 1.0),  # the plain softmax: all six tokens
    (0.7, 4, 0.9),  # top-k 4, then a nucleus of 3
    (1.5, 0, 0.8),  # a nucleus of 4
    (0.0, 2, 0.5),  # greedy: token 0 every time
]


def draw(sample: Sample, case: Batch, seed: int | None) -> torch.Tensor:
    """The user's tokens as int64 on the CPU, after checking their form."""
    gen = None if seed is None else torch.Generator(device=case.logits.device).manual_seed(seed)
    try:
        out = sample(*case.args, generator=gen)
    except NotImplementedError as exc:
        pytest.fail(f"sample is not implemented yet (NotImplementedError: {exc})", pytrace=False)
    except Exception as exc:
        pytest.fail(f"sample raised {type(exc).__name__}: {exc} ({case.summary()})", pytrace=False)
    if not isinstance(out, torch.Tensor):
        pytest.fail(f"sample must return a torch.Tensor, got {type(out).__name__}")
    b, v = case.logits.shape
    assert tuple(out.shape) == (b,), (
        f"sample returned shape {tuple(out.shape)}, expected ({b},): one token id per row"
    )
    assert out.dtype == torch.int64, f"sample returned dtype {out.dtype}, expected torch.int64"
    assert out.device == case.logits.device, (
        f"sample returned a tensor on {out.device}, logits are on {case.logits.device}"
    )
    tokens = out.cpu()
    assert bool(((tokens >= 0) & (tokens < v)).all()), (
        f"sample returned token ids outside [0, {v}): {tokens[(tokens < 0) | (tokens >= v)][:5]}"
    )
    return tokens


def test_one_token_per_row(sample: Sample, device: str) -> None:
    draw(sample, random_batch(5, 11, seed=30, device=device), seed=0)
    draw(sample, random_batch(3, 1, seed=31, device=device), seed=None)  # no generator given
    draw(sample, random_batch(1, 7, seed=35, device=device), seed=0)  # a batch of one: [1]


def test_draws_only_surviving_tokens(sample: Sample, device: str) -> None:
    case = random_batch(64, 40, seed=32, device=device)
    want = ref.filter_probs(*case.args)
    for attempt in range(20):
        tokens = draw(sample, case, seed=attempt)
        for row, token in enumerate(tokens.tolist()):
            assert want[row, token] > 0, (
                f"sample drew token {token}, whose filtered probability is 0, for "
                f"{case.describe(row)}: draw from filter_probs, and map positions in the "
                "sorted order back to token ids"
            )


def test_frequencies_match_filtered_probabilities(sample: Sample, device: str) -> None:
    n = len(CONFIGS)
    temps, ks, ps = zip(*CONFIGS, strict=True)
    # configurations interleaved row by row: per-row parameters must stay with their row
    case = batch([LOGITS] * (n * DRAWS), temps * DRAWS, ks * DRAWS, ps * DRAWS, device)
    tokens = draw(sample, case, seed=33)
    for c, (t, k, p) in enumerate(CONFIGS):
        want = ref.filter_row(LOGITS, t, k, p).probs
        counts = torch.bincount(tokens[c::n], minlength=len(LOGITS)).tolist()
        for token, (count, prob) in enumerate(zip(counts, want, strict=True)):
            freq = count / DRAWS
            sigma = math.sqrt(prob * (1 - prob) / DRAWS)
            where = f"T={t:g}, top_k={k}, top_p={p:g}, logits={LOGITS}, {DRAWS} draws"
            if prob == 0:
                assert count == 0, (
                    f"sample drew token {token} {count} times, but its filtered probability is "
                    f"0 ({where})"
                )
            assert abs(freq - prob) <= 5 * sigma + 1e-12, (
                f"sample draws token {token} with frequency {freq:.4f}, but its filtered "
                f"probability is {prob:.4f} (allowed: +-{5 * sigma:.4f}, 5 binomial standard "
                f"deviations; {where}): draw from filter_probs (e.g. with torch.multinomial)"
            )


def test_same_seed_same_tokens(sample: Sample, device: str) -> None:
    case = random_batch(200, 50, seed=34, device=device)
    first, again = draw(sample, case, seed=7), draw(sample, case, seed=7)
    differ = (first != again).nonzero().flatten()
    assert differ.numel() == 0, (
        f"two calls with generators seeded alike drew different tokens in {differ.numel()} of "
        f"200 rows (first: {case.describe(int(differ[0]))}): draw with the given generator "
        "(e.g. torch.multinomial(probs, 1, generator=generator)) and nothing from the global "
        "random state"
    )


def test_randomness_comes_from_the_generator(sample: Sample, device: str) -> None:
    """Different seeds draw differently, and two calls on one generator continue its stream
    (a sampler that seeds its own generator, or reseeds the caller's, repeats itself)."""
    case = random_batch(200, 50, seed=36, device=device)
    by_seed = [draw(sample, case, seed=s) for s in (7, 8)]
    assert bool((by_seed[0] != by_seed[1]).any()), (
        "generators seeded 7 and 8 drew the same 200 tokens: draw with the generator given "
        "(README: all of its randomness comes from generator), not one of your own"
    )
    gen = torch.Generator(device=case.logits.device).manual_seed(7)
    try:
        first, second = (sample(*case.args, generator=gen).cpu() for _ in range(2))
    except Exception as exc:
        pytest.fail(f"sample raised {type(exc).__name__}: {exc} ({case.summary()})", pytrace=False)
    assert bool((first != second).any()), (
        "two calls on the same generator drew the same 200 tokens: each call must continue "
        "the generator's stream, never reseed it (no generator.manual_seed inside sample)"
    )
