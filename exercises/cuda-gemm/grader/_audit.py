"""Global-memory loads of one ``gemm`` call in the numba-cuda simulator (the reuse audit).

While :func:`recording` is active, every element read of a device array from inside a
kernel is mapped to its address; reads that fall inside A or B are counted per element.
Views and reshapes of A and B are counted too (the address decides, not the object). Kernel
launches are recorded with their grid and block shapes; :func:`launches` records only those,
for every graded call (in the simulator, or on a GPU through numba's launch configuration),
and :func:`launch_problem` checks their blocks. :func:`reuse_problem` runs the
watched call; on a machine with a GPU, :func:`reuse_problem_in_simulator` runs it in a
separate process with the simulator on (``python _audit.py SOLUTION``).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class Watched:
    """One input matrix: its address range and a load count per element."""

    name: str
    start: int
    nbytes: int
    itemsize: int
    counts: np.ndarray  # flat, one count per element (row-major)
    cols: int

    def most(self) -> tuple[int, tuple[int, int]]:
        """(largest count, the (row, col) of an element loaded that often)."""
        flat = int(np.argmax(self.counts))
        return int(self.counts[flat]), (flat // self.cols, flat % self.cols)


@dataclass
class Record:
    launches: list[tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=list)
    watched: list[Watched] = field(default_factory=list)


_lock = threading.Lock()


def _address(array: np.ndarray, key: Any) -> int | None:
    if isinstance(key, (int, np.integer)):
        key = (key,)
    if not isinstance(key, tuple) or len(key) != array.ndim:
        return None
    if not all(isinstance(k, (int, np.integer)) for k in key):
        return None
    offset = 0
    for k, size, stride in zip(key, array.shape, array.strides, strict=True):
        k = int(k)
        if k < 0:
            k += size
        if not 0 <= k < size:
            return None  # numpy raises the out-of-bounds error next
        offset += k * stride
    return array.__array_interface__["data"][0] + offset


def _dims(dim: Any) -> tuple[int, ...]:
    if isinstance(dim, int):
        return (dim, 1, 1)
    values = tuple(int(d) for d in tuple(dim))
    return values + (1,) * (3 - len(values))


@contextlib.contextmanager
def recording(**arrays: Any) -> Iterator[Record]:
    """Count element loads of the named 2-D device arrays during the block."""
    from numba.cuda.simulator import kernel
    from numba.cuda.simulator.cudadrv import devicearray

    record = Record()
    for name, device_array in arrays.items():
        host = device_array._ary
        record.watched.append(
            Watched(
                name,
                host.__array_interface__["data"][0],
                host.nbytes,
                host.itemsize,
                np.zeros(host.size, np.int64),
                cols=host.shape[1],
            )
        )
    fake = devicearray.FakeCUDAArray
    original_getitem = fake.__getitem__
    original_call = kernel.FakeCUDAKernel.__call__

    def getitem(self: Any, idx: Any) -> Any:
        thread = threading.current_thread()
        if hasattr(thread, "_manager"):
            address = _address(self._ary, idx)
            if address is not None:
                for w in record.watched:
                    if w.start <= address < w.start + w.nbytes:
                        with _lock:
                            w.counts[(address - w.start) // w.itemsize] += 1
                        break
        return original_getitem(self, idx)

    def launch(self: Any, *args: Any) -> Any:
        if not self._device and not hasattr(threading.current_thread(), "_manager"):
            record.launches.append((_dims(self.grid_dim), _dims(self.block_dim)))
        return original_call(self, *args)

    fake.__getitem__ = getitem
    kernel.FakeCUDAKernel.__call__ = launch
    try:
        yield record
    finally:
        fake.__getitem__ = original_getitem
        kernel.FakeCUDAKernel.__call__ = original_call


Launch = tuple[tuple[int, ...], tuple[int, ...]]  # (grid, block), each padded to 3-D


@contextlib.contextmanager
def launches(simulator: bool) -> Iterator[list[Launch]]:
    """(grid, block) of every kernel launched from the host during the block. On a GPU the
    launches go through numba's ``_LaunchConfiguration``; without it nothing is recorded."""
    seen: list[Launch] = []
    if simulator:
        from numba.cuda.simulator import kernel

        cls: Any = kernel.FakeCUDAKernel
        original = cls.__call__

        def call(self: Any, *args: Any) -> Any:
            if not self._device and not hasattr(threading.current_thread(), "_manager"):
                seen.append((_dims(self.grid_dim), _dims(self.block_dim)))
            return original(self, *args)

    else:
        from numba.cuda import dispatcher

        cls = getattr(dispatcher, "_LaunchConfiguration", None)
        if cls is None:
            yield seen
            return
        original = cls.__call__

        def call(self: Any, *args: Any) -> Any:
            if not _numba_internal(self.dispatcher):  # e.g. the kernel of C[:, :] = 0
                with contextlib.suppress(TypeError, ValueError):
                    seen.append((_dims(self.griddim), _dims(self.blockdim)))
            return original(self, *args)

    cls.__call__ = call
    try:
        yield seen
    finally:
        cls.__call__ = original


def launch_problem(call: str, seen: list[Launch], tile: int) -> str | None:
    """None when every launch used blocks of tile x tile threads (README)."""
    shapes = sorted({block for _grid, block in seen})
    if shapes == [(tile, tile, 1)]:
        return None
    return (
        f"{call} launched blocks of {shapes} threads; README: blocks of tile x tile "
        f"threads, kernel[grid, (tile, tile)], here ({tile}, {tile}): the block shape "
        "follows the tile argument on every call"
    )


SHAPE = (16, 24, 16, 8)  # M, N, K, tile of the watched call
_HERE = Path(__file__).resolve().parent


def reuse_problem(gemm: Callable[..., Any], cuda: Any) -> str | None:
    """Run the watched call (simulator already on); None when the loads show tiling."""
    import _compare

    M, N, K, tile = SHAPE
    rng = np.random.default_rng(5)
    A = rng.integers(-4, 5, (M, K)).astype(np.float32)
    B = rng.integers(-4, 5, (K, N)).astype(np.float32)
    d_a, d_b = cuda.to_device(A), cuda.to_device(B)
    d_c = cuda.to_device(np.full((M, N), np.nan, np.float32))
    call = f"gemm(A, B, C, tile={tile}) with M={M}, N={N}, K={K}"
    with recording(A=d_a, B=d_b) as seen:
        try:
            gemm(d_a, d_b, d_c, tile)
        except Exception as exc:
            return f"{call} failed: {_compare.describe_failure(exc)}"
    wrong = _compare.problem(d_c.copy_to_host(), A, B, (tile,), exact=True)
    if wrong is not None:
        return f"{call}: {wrong}"
    wrong_blocks = launch_problem(call, seen.launches, tile)
    if wrong_blocks is not None:
        return wrong_blocks
    limits = {"A": (-(-N // tile), "N"), "B": (-(-M // tile), "M")}
    for watched in seen.watched:
        limit, dim = limits[watched.name]
        most, (r, c) = watched.most()
        if most > limit:
            return (
                f"{call}: {watched.name}[{r}, {c}] was loaded from global memory {most} "
                f"times; a tiled GEMM loads each element of {watched.name} at most "
                f"ceil({dim} / tile) = {limit} times. No data reuse: stage tiles of A and B "
                "in cuda.shared.array and let the tile x tile threads of a block share "
                "each loaded element (each thread loads one element of each tile per "
                "k-step)"
            )
    return None


def reuse_problem_in_simulator(solution: Path, timeout_s: float = 120) -> str | None:
    """:func:`reuse_problem` in a fresh interpreter with the simulator on (a process that
    already uses the GPU cannot switch numba to the simulator)."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    try:
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), str(solution)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return f"the data-reuse check in the simulator took more than {timeout_s:.0f} s"
    lines = done.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        answer = None
    if not isinstance(answer, dict):
        return "the data-reuse check in the simulator crashed:\n" + done.stderr[-2000:]
    return answer.get("problem")


def _main(solution: str) -> None:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # before numba.cuda is first imported
    sys.path.insert(0, str(_HERE))
    sys.path.insert(1, str(_HERE.parents[1] / "_cudakit"))
    import cudasim_shim
    from numba import cuda

    from quizzer.exercises.plugin import SolutionLoadError, load_solution

    cudasim_shim.install()
    try:
        module = load_solution(solution)
    except SolutionLoadError as exc:
        print(json.dumps({"problem": exc.message}))
        return
    gemm = getattr(module, "gemm", None)
    if not callable(gemm):
        print(json.dumps({"problem": "gemm.py must define gemm(A, B, C, tile)"}))
        return
    print(json.dumps({"problem": reuse_problem(gemm, cuda)}))


if __name__ == "__main__":
    _main(sys.argv[1])


def _numba_internal(dispatcher: Any) -> bool:
    """A kernel of numba's own (the assignment kernel of a device-array slice, ...)."""
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
    return module == "numba" or module.startswith("numba.")
