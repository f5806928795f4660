"""The CUDA C++ track's plumbing, shared by every CUDA exercise's ``test_cuda_track.py``.

A grader describes its ``.cu`` file once with a :class:`CuTrack` (the file name its messages
use, solve's parameters and ctypes argument types) and takes its fixtures from it::

    TRACK = cu_build.CuTrack("reduce.cu", "const float* in, float* out, int n", ...)
    cu_source, sm80_build, kernels, gpu_library = TRACK.fixtures()

- ``cu_source``: the user's file (skips a file that is not ``.cu``);
- ``sm80_build``: an ``nvcc -arch=sm_80`` build with the PTX kept (skips without nvcc);
- ``kernels``: the ``__global__`` kernels of that PTX (fails on a compile error);
- ``gpu_library``: the file built for this GPU and loaded with ctypes, ``solve`` typed.

The checks around them are functions: :meth:`CuTrack.check_exports_solve` (the compile-only
report of registers, shared memory and spills), :func:`report_cpu_run` (what a CPU run
checked), :func:`divergent_barriers` and :func:`allocation` (source checks with the
exercise's advice; allocation also reports a stream of the solution's own),
:func:`synchronize` (a kernel fault as a failure) and
:func:`sanitizer_driver` / :func:`sanitize` (compute-sanitizer on a stand-alone driver).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cu_source as cu_source_checks
import ptx_checks
import pytest

Metric = Callable[[str, float, str], None]  # the record_metric fixture


@dataclass(frozen=True)
class CuTrack:
    """One exercise's ``.cu`` file: its name in messages and the interface of ``solve``."""

    file: str  # e.g. "reduce.cu"
    signature: str  # solve's parameters, as the compile-only check names them
    argtypes: Sequence[Any]  # ctypes types of solve's arguments
    gpu_export: str  # what a GPU build without solve must export, e.g. 'extern "C" ...'

    def compile_failure(self, log: str) -> str:
        """The message for a file nvcc could not compile (its errors quoted)."""
        return f"nvcc could not compile {self.file}:\n" + ptx_checks.compile_errors(log)

    def check_exports_solve(self, build: ptx_checks.Build, record_metric: Metric) -> None:
        """Assert the sm_80 build exports solve with C linkage; record each kernel's
        registers, shared memory and spills."""
        assert build.ok, self.compile_failure(build.log)
        assert build.library is not None
        library = ctypes.CDLL(str(build.library))
        assert hasattr(library, "solve"), (
            f'{self.file} must export extern "C" void solve({self.signature}) '
            '(without extern "C" the name is C++-mangled and cannot be called)'
        )
        for mangled, res in ptx_checks.resources(build.log).items():
            name = ptx_checks.short_name(mangled)
            record_metric(f"{name} registers", res.registers, "registers/thread")
            record_metric(f"{name} shared memory", res.smem_bytes, "bytes/block")
            record_metric(f"{name} spills", res.spill_bytes, "bytes")

    def fixtures(self) -> tuple[Any, Any, Any, Any]:
        """The fixtures ``cu_source``, ``sm80_build``, ``kernels`` and ``gpu_library``, to be
        assigned to those names in the test module."""

        @pytest.fixture(scope="session", name="cu_source")
        def cu_source(solution_path: Path) -> Path:
            """The user's .cu file."""
            if solution_path.suffix != ".cu":
                pytest.skip(f"CUDA C++ track: expects a .cu file, got {solution_path.name}")
            return solution_path

        @pytest.fixture(scope="session", name="sm80_build")
        def sm80_build(
            cu_source: Path, tmp_path_factory: pytest.TempPathFactory
        ) -> ptx_checks.Build:
            """nvcc -arch=sm_80 build (PTX kept)."""
            if ptx_checks.nvcc() is None:
                pytest.skip("nvcc not found: install the CUDA toolkit to check the CUDA C++ track")
            return ptx_checks.compile_cu(cu_source, tmp_path_factory.mktemp("sm80"))

        @pytest.fixture(name="kernels")
        def kernels(sm80_build: ptx_checks.Build) -> list[ptx_checks.Kernel]:
            """The __global__ kernels of the PTX."""
            if not sm80_build.ok:
                pytest.fail(self.compile_failure(sm80_build.log))
            found = ptx_checks.kernels(sm80_build.ptx)
            if not found:
                pytest.fail(f"{self.file} defines no __global__ kernel")
            return found

        @pytest.fixture(scope="session", name="gpu_library")
        def gpu_library(
            cu_source: Path, tmp_path_factory: pytest.TempPathFactory, device: str
        ) -> ctypes.CDLL:
            """The user's solve, built for this GPU and loaded with ctypes."""
            if device != "cuda":
                pytest.skip("needs a CUDA GPU (running on cpu)")
            if ptx_checks.nvcc() is None:
                pytest.skip(f"nvcc not found: install the CUDA toolkit to build {self.file}")
            folder = tmp_path_factory.mktemp("native")
            build = ptx_checks.compile_cu(cu_source, folder, arch="native")
            if not build.ok:
                pytest.fail(self.compile_failure(build.log))
            library = ctypes.CDLL(str(build.library))
            if not hasattr(library, "solve"):
                pytest.fail(f"{self.file} must export {self.gpu_export}")
            library.solve.argtypes = list(self.argtypes)
            library.solve.restype = None
            return library

        return cu_source, sm80_build, kernels, gpu_library


def report_cpu_run(
    request: pytest.FixtureRequest, device: str, record_metric: Metric, not_run: str, on_gpu: str
) -> None:
    """On a CPU: record how many compile checks of test_cuda_track.py passed, and that
    ``not_run`` was not run. On a GPU: skip with ``on_gpu``."""
    if device != "cpu":
        pytest.skip(on_gpu)
    outcomes = request.config.stash.get(ptx_checks.OUTCOMES, {})
    ran = {k: v for k, v in outcomes.items() if "test_cuda_track.py::" in k and v != "skipped"}
    ran.pop(request.node.nodeid, None)
    passed = sum(v == "passed" for v in ran.values())
    verdict = "compile checks passed" if passed == len(ran) else "compile checks failed"
    record_metric(f"{verdict}; {not_run}", passed, f"of {len(ran)} checks")


def divergent_barriers(cu_source: Path, source: str, advice: str) -> str:
    """The barriers under thread-dependent branches (at most 3), each followed by ``advice``
    (which goes on from "a condition that differs between the threads of a block");
    "" when there are none."""
    return "; ".join(
        f"{cu_source.name} line {f.line}: {f.barrier}() is inside `{f.statement}`, a condition "
        "that differs between the threads of a block" + advice
        for f in cu_source_checks.divergent_barriers(source)[:3]
    )


def allocation(cu_source: Path, source: str, advice: str) -> str:
    """The first allocation call in ``source``, followed by ``advice`` (which goes on from
    "README: allocate nothing"); "" when there is none."""
    found = cu_source_checks.allocations(source)
    if not found:
        return stream(cu_source, source)
    line, call = found[0]
    return f"{cu_source.name} line {line} calls {call}: README: allocate nothing " + advice


def stream(cu_source: Path, source: str) -> str:
    """The first stream created or launched on in ``source``; "" when there is none."""
    found = cu_source_checks.streams(source)
    if not found:
        return ""
    line, what = found[0]
    return (
        f"{cu_source.name} line {line} {what}: README: launch on the default stream (the "
        "caller reads out on it as soon as solve returns; work on another stream may not "
        "have finished by then)"
    )


def synchronize(call: str) -> None:
    """Wait for the GPU; a fault inside the kernel fails the check, naming ``call``."""
    import torch

    try:
        torch.cuda.synchronize()
    except RuntimeError as exc:  # a fault inside the kernel
        pytest.fail(f"{call} failed on the GPU: {exc}", pytrace=False)


def _sanitizer() -> str | None:
    """The compute-sanitizer binary, if the toolkit has one."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    nvcc = ptx_checks.nvcc()
    if nvcc:
        roots.append(str(Path(os.path.realpath(nvcc)).parent.parent))
    for root in filter(None, roots):
        for candidate in (Path(root) / "bin", Path(root) / "compute-sanitizer"):
            if (candidate / "compute-sanitizer").is_file():
                return str(candidate / "compute-sanitizer")
    return None


def sanitizer_driver(harness: Path, cu_source: Path, folder: Path) -> tuple[str, Path]:
    """compute-sanitizer and the stand-alone driver ``harness`` linked with the user's file,
    built in ``folder``; skips without the toolkit, fails when the driver does not build."""
    sanitizer = _sanitizer()
    nvcc = ptx_checks.nvcc()
    if sanitizer is None or nvcc is None:
        pytest.skip("compute-sanitizer (CUDA toolkit) not found")
    binary = folder / "harness"
    command = [nvcc, "-arch=native", "-O2", "-lineinfo", "-o", str(binary)]
    build = subprocess.run(
        [*command, str(harness), str(cu_source)],
        capture_output=True,
        text=True,
        timeout=ptx_checks.COMPILE_TIMEOUT_S,
    )
    assert build.returncode == 0, "nvcc could not build the sanitizer driver:\n" + (
        ptx_checks.compile_errors(build.stdout + build.stderr)
    )
    return sanitizer, binary


def sanitize(sanitizer: str, tool: str, binary: Path, *args: object) -> tuple[int, list[str], str]:
    """Run ``binary args`` under ``compute-sanitizer --tool tool``: its exit status, the
    lines of its report (without the summary) and its whole output."""
    command = [sanitizer, "--tool", tool, "--error-exitcode", "99", str(binary)]
    run = subprocess.run([*command, *map(str, args)], capture_output=True, text=True, timeout=300)
    output = run.stdout + run.stderr
    report = [ln for ln in output.splitlines() if ln.startswith("=========")]
    problems = [ln for ln in report if "ERROR SUMMARY" not in ln and ln.strip("= ")]
    return run.returncode, problems, output
