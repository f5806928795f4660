"""layernorm grader set-up: the user's functions, and the CUDA simulator for the numba track.

The simulator is chosen in ``pytest_configure`` before numba.cuda is imported, and the numba
track's ``cuda`` fixture is there too: both are shared by the CUDA exercises
(``_cudakit/grader_setup.py``). The torch track never imports numba.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE))  # helpers beside the tests
sys.path.insert(1, str(_HERE.parents[1] / "_cudakit"))  # shared by the CUDA exercises

from grader_setup import cuda, pytest_configure  # noqa: E402, F401  (on the paths above)

# each track's checks live in their own files; the other track's are not even collected (the
# numba track then never imports torch, which keeps a simulator run short)
_TRACK_FILES = {"torch": "test_part", "numba": "test_numba"}


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Skip collecting the other track's test files."""
    track = config.getoption("--track", default="") or ""
    if track not in _TRACK_FILES or not collection_path.name.startswith("test_"):
        return None
    return not collection_path.name.startswith(_TRACK_FILES[track]) or None


def _function(solution: ModuleType, name: str, signature: str) -> Callable[..., Any]:
    fn = getattr(solution, name, None)
    if not callable(fn):
        pytest.fail(f"your file must define {name}{signature}", pytrace=False)
    return fn


@pytest.fixture
def ln_forward(solution: ModuleType) -> Callable[..., Any]:
    """layer_norm_forward(x, weight, bias, eps) -> (y, mean, rstd) (torch track)."""
    return _function(solution, "layer_norm_forward", "(x, weight, bias, eps)")


@pytest.fixture
def ln_backward(solution: ModuleType) -> Callable[..., Any]:
    """layer_norm_backward(dy, x, weight, mean, rstd) -> (dx, dweight, dbias)."""
    return _function(solution, "layer_norm_backward", "(dy, x, weight, mean, rstd)")


@pytest.fixture
def rms_forward(solution: ModuleType) -> Callable[..., Any]:
    """rms_norm_forward(x, weight, eps) -> (y, rstd) (torch track)."""
    return _function(solution, "rms_norm_forward", "(x, weight, eps)")


@pytest.fixture
def rms_backward(solution: ModuleType) -> Callable[..., Any]:
    """rms_norm_backward(dy, x, weight, rstd) -> (dx, dweight)."""
    return _function(solution, "rms_norm_backward", "(dy, x, weight, rstd)")
