"""gptq grader fixtures: the user's function, the device, seeded calibration data."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # gptq_reference beside the tests

import torch


@pytest.fixture
def gptq(solution: ModuleType) -> Callable[..., tuple[torch.Tensor, float]]:
    fn = getattr(solution, "gptq_quantize", None)
    if not callable(fn):
        pytest.fail("gptq.py must define gptq_quantize(W, H, bits, group_size, ...) -> (Q, loss)")
    return fn


@pytest.fixture(scope="session")
def dev(device: str) -> torch.device:
    torch.manual_seed(0)
    if device == "cpu":  # small matrices: one thread beats contention between several
        torch.set_num_threads(1)
    return torch.device(device)
