"""spec-decode-sampling grader fixtures: the user's two functions."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest
import torch

Result = tuple[torch.Tensor, torch.Tensor]


def _function(solution: ModuleType, name: str, signature: str) -> Callable[..., Result]:
    fn = getattr(solution, name, None)
    if not callable(fn):
        pytest.fail(f"spec_decode.py must define {name}{signature}", pytrace=False)
    return fn


@pytest.fixture
def verify(solution: ModuleType) -> Callable[..., Result]:
    return _function(
        solution, "verify", "(draft_tokens, q, p, generator=None) -> (tokens, lengths)"
    )


@pytest.fixture
def verify_greedy(solution: ModuleType) -> Callable[..., Result]:
    return _function(solution, "verify_greedy", "(draft_tokens, p) -> (tokens, lengths)")
