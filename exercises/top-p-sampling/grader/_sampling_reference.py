"""The grader's own filter: one row at a time, in plain Python floats (float64).

Written as the README states the rules, deliberately unlike a vectorised solution: a list
sorted by (descending probability, token id), a running sum for the nucleus.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Row:
    """One row's filtered distribution, and how its nucleus was cut."""

    probs: list[float]
    margin: float  # smallest |mass before / kept mass - top_p| over the top-k survivors
    ranked: tuple[int, ...] = ()  # the top-k survivors, most probable first
    before: tuple[float, ...] = ()  # the renormalised mass before each of them
    nucleus: int = 0  # how many of them top-p keeps


def filter_row(logits: list[float], temperature: float, top_k: int, top_p: float) -> Row:
    vocab = len(logits)
    if temperature == 0:
        best = max(range(vocab), key=lambda i: (logits[i], -i))  # first maximal logit
        return Row([1.0 if i == best else 0.0 for i in range(vocab)], math.inf)
    scaled = [x / temperature for x in logits]
    top = max(scaled)
    weights = [math.exp(x - top) for x in scaled]  # exp(-inf) = 0: a -inf logit is never drawn
    total = sum(weights)
    probs = [w / total for w in weights]
    ranked = sorted(range(vocab), key=lambda i: (-probs[i], i))
    if 0 < top_k < vocab:
        ranked = ranked[:top_k]
    kept_mass = sum(probs[i] for i in ranked)
    shares, before = [], 0.0
    for i in ranked:
        shares.append(before / kept_mass)
        before += probs[i]
    nucleus = len(ranked)
    margin = math.inf
    if top_p < 1:
        nucleus = next((r for r, share in enumerate(shares) if share >= top_p), len(ranked))
        margin = min(abs(share - top_p) for share in shares[: nucleus + 1])
    mass = sum(probs[i] for i in ranked[:nucleus])
    out = [0.0] * vocab
    for i in ranked[:nucleus]:
        out[i] = probs[i] / mass
    return Row(out, margin, tuple(ranked), tuple(shares), nucleus)


def rows(
    logits: torch.Tensor, temperature: torch.Tensor, top_k: torch.Tensor, top_p: torch.Tensor
) -> list[Row]:
    return [
        filter_row(z, float(t), int(k), float(p))
        for z, t, k, p in zip(
            logits.double().cpu().tolist(),
            temperature.cpu().tolist(),
            top_k.cpu().tolist(),
            top_p.cpu().tolist(),
            strict=True,
        )
    ]


def filter_probs(
    logits: torch.Tensor, temperature: torch.Tensor, top_k: torch.Tensor, top_p: torch.Tensor
) -> torch.Tensor:
    """[B, V] float64 on the CPU."""
    found = rows(logits, temperature, top_k, top_p)
    return torch.tensor([r.probs for r in found], dtype=torch.float64).reshape(logits.shape)
