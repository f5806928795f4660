"""flash-attention grader fixtures: the user's forward and backward functions."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside the tests

import torch


def _function(solution: ModuleType, name: str, signature: str) -> Callable[..., Any]:
    fn = getattr(solution, name, None)
    if not callable(fn):
        pytest.fail(f"flash_attention.py must define {name}{signature}", pytrace=False)
    return fn


@pytest.fixture(autouse=True, scope="session")
def _one_thread(device: str) -> None:
    if device == "cpu":  # small tiles: one thread beats contention between several
        torch.set_num_threads(1)


@pytest.fixture
def forward(solution: ModuleType) -> Callable[..., Any]:
    return _function(
        solution,
        "flash_attention_forward",
        "(q, k, v, causal=False, block_q=64, block_k=64) -> (o, lse)",
    )


@pytest.fixture
def backward(solution: ModuleType) -> Callable[..., Any]:
    return _function(
        solution,
        "flash_attention_backward",
        "(q, k, v, o, lse, do, causal=False, block_q=64, block_k=64) -> (dq, dk, dv)",
    )
