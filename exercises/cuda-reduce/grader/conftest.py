"""cuda-reduce grader set-up: choose real CUDA or the numba-cuda simulator before numba loads.

``NUMBA_ENABLE_CUDASIM`` is read once, when ``numba.cuda`` is first imported, so it is set
here in ``pytest_configure`` (after the quizzer plugin has parsed ``--device``), before any
test imports the user's module.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside the tests
sys.path.insert(1, str(Path(__file__).resolve().parents[2] / "_cudakit"))  # shared ones

import ptx_checks  # found through the paths above


def _device(config: pytest.Config) -> str:
    requested = config.getoption("--device", default="cpu")
    if requested in ("cpu", "cuda"):
        return requested
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if "numba" in sys.modules and "numba.cuda" in sys.modules:
        return  # too late to choose; the numba tests check which mode is active
    if _device(config) == "cpu":
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        os.environ.pop("NUMBA_ENABLE_CUDASIM", None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """Keep each check's outcome, for the summary of what a CPU run checked."""
    report: pytest.TestReport = yield
    if report.when == "call" or report.outcome != "passed":
        item.config.stash.setdefault(ptx_checks.OUTCOMES, {})[item.nodeid] = report.outcome
    return report
