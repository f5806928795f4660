"""Grader for ``verify_greedy(draft_tokens, p) -> (tokens, lengths)``: temperature 0.

A draft token is kept while it equals argmax p_i (the lowest id among equal maxima); the
first mismatch emits argmax p_i instead and stops; a row that keeps all K emits argmax p_K.
Deterministic, so every case is exact.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

Greedy = Callable[..., tuple[torch.Tensor, torch.Tensor]]

RULE = (
    "greedy verification keeps draft token x_i while x_i == argmax p_i (the lowest id among "
    "equal maxima); the first mismatch emits argmax p_i and stops; a row that keeps all K "
    "emits argmax p[K]; positions after the last emitted token are -1"
)


def test_greedy_cases(verify_greedy: Greedy, device: str) -> None:
    p = torch.tensor(
        [
            [[0.1, 0.6, 0.3], [0.2, 0.2, 0.6], [0.7, 0.2, 0.1]],  # keeps 1, 2; bonus 0
            [[0.1, 0.6, 0.3], [0.5, 0.2, 0.3], [0.1, 0.1, 0.8]],  # keeps 1, then 0 not 2
            [[0.5, 0.1, 0.4], [0.2, 0.2, 0.6], [0.7, 0.2, 0.1]],  # first mismatch: 0
            [[0.4, 0.4, 0.2], [0.4, 0.2, 0.4], [0.3, 0.3, 0.4]],  # ties: lowest id
        ],
        dtype=torch.float64,
        device=device,
    )
    draft = torch.tensor([[1, 2], [1, 2], [2, 2], [0, 0]], device=device)
    saved = p.clone(), draft.clone()
    try:
        tokens, lengths = verify_greedy(draft, p)
    except NotImplementedError as exc:
        pytest.fail(f"verify_greedy is not implemented yet ({exc})", pytrace=False)
    assert torch.equal(saved[0], p) and torch.equal(saved[1], draft), (
        "verify_greedy modified its inputs in place"
    )
    want = torch.tensor([[1, 2, 0], [1, 0, -1], [0, -1, -1], [0, 0, 2]])
    assert tokens.dtype == torch.int64 and lengths.dtype == torch.int64, "return torch.int64"
    assert torch.equal(tokens.cpu(), want), (
        f"{RULE}: got {tokens.tolist()}, expected {want.tolist()}"
    )
    assert lengths.cpu().tolist() == [3, 2, 1, 3], f"{RULE}: lengths {lengths.tolist()}"
