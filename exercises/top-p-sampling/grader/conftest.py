"""top-p-sampling grader fixtures: the user's two functions."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside the tests

import torch


def _function(solution: ModuleType, name: str, signature: str) -> Callable[..., torch.Tensor]:
    fn = getattr(solution, name, None)
    if not callable(fn):
        pytest.fail(f"sampling.py must define {name}{signature}", pytrace=False)
    return fn


@pytest.fixture
def filter_probs(solution: ModuleType) -> Callable[..., torch.Tensor]:
    return _function(solution, "filter_probs", "(logits, temperature, top_k, top_p) -> [B, V]")


@pytest.fixture
def sample(solution: ModuleType) -> Callable[..., torch.Tensor]:
    return _function(
        solution, "sample", "(logits, temperature, top_k, top_p, generator=None) -> [B]"
    )
