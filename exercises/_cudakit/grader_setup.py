"""The set-up every CUDA exercise's ``grader/conftest.py`` shares, re-exported from it::

    from grader_setup import cuda, pytest_configure, pytest_runtest_makereport  # noqa: F401

- ``pytest_configure``: real CUDA or the numba-cuda simulator. ``NUMBA_ENABLE_CUDASIM`` is
  read once, when ``numba.cuda`` is first imported, so it is set here (after the quizzer
  plugin has parsed ``--device``), before any test imports the user's module.
- ``pytest_runtest_makereport``: keeps each check's outcome, for the summary of what a CPU
  run of the CUDA C++ track checked (``cu_build.report_cpu_run``).
- ``cuda``: the numba track's ``numba.cuda``, in simulator mode with the grader's additions
  (``cudasim_shim``) on a CPU; fails when the mode is not the one the device needs.

Importing this module also has pytest rewrite the asserts of ``cu_build`` (as it does a test
module's), so that its failure messages read like those of the checks that call it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from types import ModuleType

import pytest

pytest.register_assert_rewrite("cu_build")

import ptx_checks  # noqa: E402  (after the rewrite is registered: it is not cu_build)


def _device(config: pytest.Config) -> str:
    requested = config.getoption("--device", default="cpu")
    if requested in ("cpu", "cuda"):
        return requested
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """Turn the simulator on for a CPU run, off for a GPU run (unless numba.cuda is already
    imported)."""
    if "numba" in sys.modules and "numba.cuda" in sys.modules:
        return  # too late to choose; the numba tests check which mode is active
    if _device(config) == "cpu":
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        os.environ.pop("NUMBA_ENABLE_CUDASIM", None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep each check's outcome, for the summary of what a CPU run checked."""
    report: pytest.TestReport = yield
    if report.when == "call" or report.outcome != "passed":
        item.config.stash.setdefault(ptx_checks.OUTCOMES, {})[item.nodeid] = report.outcome
    return report


@pytest.fixture(scope="session")
def cuda(device: str) -> ModuleType:
    """numba.cuda, in simulator mode (with the grader's additions) on a CPU."""
    from numba import cuda as numba_cuda
    from numba.cuda.core import config

    if device == "cpu":
        if not config.ENABLE_CUDASIM:
            pytest.fail("grader set-up: numba.cuda was imported before the simulator was enabled")
        import cudasim_shim

        cudasim_shim.install()
    elif config.ENABLE_CUDASIM:
        pytest.fail("grader set-up: the numba-cuda simulator is on although a GPU is used")
    return numba_cuda
