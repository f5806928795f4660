"""cuda-softmax grader set-up: helper paths, then the shared ``_cudakit/grader_setup.py``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside the tests
sys.path.insert(1, str(Path(__file__).resolve().parents[2] / "_cudakit"))  # shared ones

from grader_setup import cuda, pytest_configure, pytest_runtest_makereport  # noqa: F401
