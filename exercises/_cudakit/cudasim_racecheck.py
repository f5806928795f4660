"""Shared-memory race detector for the numba-cuda simulator (installed by cudasim_shim).

Like ``compute-sanitizer --tool racecheck``: a thread that reads or writes an element of a
``cuda.shared.array`` that another thread wrote (or, for a write, read) since the last
``syncthreads()`` raises an error naming both threads; within one warp a completed
``syncwarp()`` or shuffle also orders the accesses. Atomics are exempt. A read of an element
that no thread of the block has written is an error too (uninitialised shared memory, like
``compute-sanitizer --tool initcheck`` for global memory); float arrays start as NaN. The
records live in the simulated block (``_qz_block``: ``lock``, ``epoch``, ``warp_epoch()``,
``shared``).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

WARP = 32
_tls = threading.local()  # .atomic: inside a cuda.atomic.* call
_alloc_lock = threading.Lock()


class TrackedShared:
    """A ``cuda.shared.array`` whose element accesses are checked for races."""

    __slots__ = ("_array", "_label")

    def __init__(self, array: np.ndarray, label: str) -> None:
        self._array = array
        self._label = label

    def __getitem__(self, key: Any) -> Any:
        _track(self, key, write=False)
        return self._array[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        _track(self, key, write=True)
        self._array[key] = value

    def __len__(self) -> int:
        return len(self._array)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self._array, dtype=dtype)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._array, name)


def _flat_index(array: np.ndarray, key: Any) -> int | None:
    try:
        if isinstance(key, (int, np.integer)):
            index = int(key)
            return index + array.size if index < 0 else index
        if isinstance(key, tuple) and all(isinstance(k, (int, np.integer)) for k in key):
            return int(np.ravel_multi_index(tuple(int(k) for k in key), array.shape, mode="wrap"))
    except (ValueError, TypeError):
        return None
    return None  # slices and fancy indexing are not tracked


def _track(shared: TrackedShared, key: Any, write: bool) -> None:
    if getattr(_tls, "atomic", False):
        return
    thread = threading.current_thread()
    block = getattr(getattr(thread, "_manager", None), "_qz_block", None)
    index = _flat_index(shared._array, key)
    if block is None or index is None or not 0 <= index < shared._array.size:
        return  # outside a kernel, untracked key, or out of bounds (numpy raises next)
    tid, warp = thread.thread_id, thread.thread_id // WARP
    with block.lock:
        records = block.shared.setdefault(id(shared), {})
        record = records.get(index)  # [writer, epoch, warp epoch, {reader: (epoch, wepoch)}]
        epoch = block.epoch

        def conflict(other: int, other_epoch: int, other_wepoch: int) -> bool:
            if other == tid or other_epoch != epoch:
                return False
            same_warp = other // WARP == warp
            return not (same_warp and block.warp_epoch(warp) > other_wepoch)

        def race(what: str, other: int, other_did: str) -> RuntimeError:
            barrier = "cuda.syncthreads()"
            if other // WARP == warp:
                barrier += " or, within one warp, cuda.syncwarp()"
            return RuntimeError(
                f"shared-memory race on element {index} of {shared._label}: this thread {what} "
                f"it after thread {other} {other_did} it with no barrier in between (missing "
                f"{barrier} between two steps that share memory)"
            )

        if not write and (record is None or record[0] < 0):
            raise RuntimeError(
                f"read of uninitialised shared memory: element {index} of {shared._label} was "
                f"never written by a thread of this block ({block.nthreads} threads) before "
                "this read: either no thread fills that slot (read only the slots this launch "
                "has filled), or one fills it later, with no cuda.syncthreads() between that "
                "store and this read"
            )
        if record is not None and conflict(record[0], record[1], record[2]):
            raise race("writes" if write else "reads", record[0], "wrote")
        if write:
            if record is not None:
                for reader, (r_epoch, r_wepoch) in record[3].items():
                    if conflict(reader, r_epoch, r_wepoch):
                        raise race("writes", reader, "read")
            records[index] = [tid, epoch, block.warp_epoch(warp), {}]
        else:
            record[3][tid] = (epoch, block.warp_epoch(warp))


def make_shared_array(original: Callable[..., Any]) -> Callable[..., Any]:
    """``cuda.shared.array`` keyed by the caller's file and line like the stock one (without
    ``traceback.extract_stack``, which stats every source file per thread), race-tracked."""
    from numba.cuda import types
    from numba.cuda.np import numpy_support

    def array(self: Any, shape: Any, dtype: Any, alignment: Any = None) -> Any:
        if shape == 0 or alignment is not None:
            return original(self, shape, dtype, alignment)
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        frame = sys._getframe(1)
        caller = (frame.f_code.co_filename, frame.f_lineno)
        with _alloc_lock:  # the block's threads arrive here at once: one array for all
            res = self._allocations.get(caller)
            if res is None:
                name = frame.f_code.co_filename.rsplit("/", 1)[-1]
                label = f"the shared array allocated at {name} line {frame.f_lineno}"
                fill = np.nan if np.dtype(dtype).kind == "f" else 0
                res = TrackedShared(np.full(shape, fill, dtype), label)
                self._allocations[caller] = res
        return res

    return array


def untracked(method: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _tls.atomic = True
        try:
            return method(*args, **kwargs)
        finally:
            _tls.atomic = False

    wrapper.__name__ = method.__name__
    return wrapper
