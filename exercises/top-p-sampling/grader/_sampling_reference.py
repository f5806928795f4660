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
    """One row's filtered distribution and how close it came to a top-p decision."""

    probs: list[float]
    margin: float  # smallest |mass before / kept mass - top_p| over the top-k survivors


def filter_row(logits: list[float], temperature: float, top_k: int, top_p: float) -> Row:
    vocab = len(logits)
    if temperature == 0:
        best = max(range(vocab), key=lambda i: (logits[i], -i))  # first maximal logit
        return Row([1.0 if i == best else 0.0 for i in range(vocab)], math.inf)
    scaled = [x / temperature for x in logits]
    top = max(scaled)
    weights = [math.exp(x - top) for x in scaled]
    total = sum(weights)
    probs = [w / total for w in weights]
    ranked = sorted(range(vocab), key=lambda i: (-probs[i], i))
    if 0 < top_k < vocab:
        ranked = ranked[:top_k]
    kept_mass = sum(probs[i] for i in ranked)
    margin = math.inf
    if top_p < 1:
        nucleus: list[int] = []
        before = 0.0
        for i in ranked:
            share = before / kept_mass
            margin = min(margin, abs(share - top_p))
            if share >= top_p:
                break
            nucleus.append(i)
            before += probs[i]
        ranked = nucleus
    mass = sum(probs[i] for i in ranked)
    out = [0.0] * vocab
    for i in ranked:
        out[i] = probs[i] / mass
    return Row(out, margin)


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
