"""What one ``softmax`` call did in the numba-cuda simulator: launches and loads of ``x``.

While :func:`recording` is active, every kernel launch (grid and block size) is noted, and
every element load from global memory whose address lies in the buffer of ``x`` is counted
per element, whether the kernel indexes ``x[r, j]`` or a row view ``x[r][j]``. Loads from
shared memory or local copies are not global loads and are not counted. :func:`launches`
records only the launches, for every graded call (in the simulator, or on a GPU through
numba's launch configuration).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import cudasim_shim
import numpy as np


@dataclass
class Record:
    """What a recorded call did."""

    launches: list[tuple[int, int]] = field(default_factory=list)  # (blocks, threads)
    reads: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # per element


def _in_kernel() -> bool:
    return hasattr(threading.current_thread(), "_manager")


def _element_offset(array: np.ndarray, idx: Any) -> int | None:
    """Byte offset of ``array[idx]`` from ``array``'s data pointer, for integer indices."""
    key = idx if isinstance(idx, tuple) else (idx,)
    if len(key) != array.ndim or not all(isinstance(k, (int, np.integer)) for k in key):
        return None
    offset = 0
    for k, n, stride in zip(key, array.shape, array.strides, strict=True):
        k = int(k)
        offset += (k + n if k < 0 else k) * stride
    return offset


@contextlib.contextmanager
def recording(x: Any) -> Iterator[Record]:
    """Patch the simulator for the duration of one call on the device array ``x``."""
    from numba.cuda.simulator import kernel
    from numba.cuda.simulator.cudadrv import devicearray

    host = x._ary
    start = host.__array_interface__["data"][0]
    itemsize = host.itemsize
    record = Record(reads=np.zeros(host.size, np.int64))
    lock = threading.Lock()
    fake = devicearray.FakeCUDAArray
    saved_get, saved_call = fake.__getitem__, kernel.FakeCUDAKernel.__call__

    def getitem(self: Any, idx: Any) -> Any:
        value = saved_get(self, idx)
        if _in_kernel() and not isinstance(value, fake):
            offset = _element_offset(self._ary, idx)
            if offset is not None:
                where = self._ary.__array_interface__["data"][0] + offset - start
                if 0 <= where < host.nbytes:
                    with lock:
                        record.reads[where // itemsize] += 1
        return value

    def launch(self: Any, *args: Any) -> Any:
        if not self._device and not _in_kernel():
            blocks, threads = (cudasim_shim.launch_size(d) for d in (self.grid_dim, self.block_dim))
            record.launches.append((blocks, threads))
        return saved_call(self, *args)

    fake.__getitem__ = getitem
    kernel.FakeCUDAKernel.__call__ = launch
    try:
        yield record
    finally:
        fake.__getitem__ = saved_get
        kernel.FakeCUDAKernel.__call__ = saved_call


@contextlib.contextmanager
def launches(simulator: bool) -> Iterator[list[tuple[int, int]]]:
    """(blocks, threads) of every kernel launched from the host during the block. On a GPU
    the launches go through numba's ``_LaunchConfiguration``; without it nothing is
    recorded."""
    seen: list[tuple[int, int]] = []
    if simulator:
        from numba.cuda.simulator import kernel

        cls: Any = kernel.FakeCUDAKernel
        original = cls.__call__

        def call(self: Any, *args: Any) -> Any:
            if not self._device and not _in_kernel():
                dims = (self.grid_dim, self.block_dim)
                seen.append(tuple(cudasim_shim.launch_size(d) for d in dims))  # type: ignore[arg-type]
            return original(self, *args)

    else:
        from numba.cuda import dispatcher

        cls = getattr(dispatcher, "_LaunchConfiguration", None)
        if cls is None:
            yield seen
            return
        original = cls.__call__

        def call(self: Any, *args: Any) -> Any:
            if _numba_internal(self.dispatcher):  # e.g. the kernel of y[:, :] = 0
                return original(self, *args)
            with contextlib.suppress(TypeError, ValueError):
                dims = (self.griddim, self.blockdim)
                seen.append(tuple(cudasim_shim.launch_size(d) for d in dims))  # type: ignore[arg-type]
            return original(self, *args)

    cls.__call__ = call
    try:
        yield seen
    finally:
        cls.__call__ = original


def _numba_internal(dispatcher: Any) -> bool:
    """A kernel of numba's own (the assignment kernel of a device-array slice, ...)."""
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
    return module == "numba" or module.startswith("numba.")
