"""What one ``reduce_sum`` call did in the numba-cuda simulator, for the structural checks.

While :func:`recording` is active it notes, for the call it wraps:

- every kernel launch (grid and block size);
- the values copied to the host (``copy_to_host`` and scalar reads of a device array from
  host code), to tell a GPU pass 2 from one done in Python;
- float ``cuda.atomic.add``/``sub`` on global memory (forbidden: the block order, hence the
  rounding, changes between runs on a GPU);
- an atomic on global memory taken by a thread that stored to global memory without a
  ``cuda.threadfence()`` since (a last-block "ticket" that may read stale partial sums on a
  GPU, whose memory model the simulator does not have);
- which index of the input each thread loads first, second, ... (coalescing: in a
  grid-stride loop neighbouring lanes load neighbouring addresses).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import cudasim_shim

WARP = 32
LOADS_KEPT = 4  # per thread: the first few loads show the access pattern


@dataclass
class Record:
    """What a recorded call did."""

    launches: list[tuple[int, int]] = field(default_factory=list)  # (blocks, threads)
    host_values: int = 0  # values copied from device arrays to the host
    float_atomics: list[str] = field(default_factory=list)
    unfenced_atomics: list[str] = field(default_factory=list)
    atomics: int = 0
    loads: dict[tuple[int, int, int], list[int]] = field(default_factory=dict)

    def block_chunked(self) -> str | None:
        """Pass 1 loads that step by blockDim inside each block's own chunk of x, not by the
        whole grid (every thread with three or more loads steps by exactly the block size)."""
        if not self.launches or self.launches[0][0] < 2:
            return None
        blocks, threads = self.launches[0]
        steps = {
            (block, tid): [b - a for a, b in itertools.pairwise(indices)]
            for (launch, block, tid), indices in self.loads.items()
            if launch == 1 and len(indices) >= 3
        }
        if steps and all(set(s) == {threads} for s in steps.values()):
            (block, tid), _ = min(steps.items())
            indices = self.loads[(1, block, tid)]
            return (
                f"thread {tid} of block {block} loads x[{indices[0]}], x[{indices[1]}], "
                f"x[{indices[2]}]: steps of {threads} (one block), not of blocks * threads = "
                f"{blocks * threads}"
            )
        return None

    def uncoalesced(self) -> str | None:
        """A warp whose lanes' k-th loads of the input are not consecutive addresses."""
        for (launch, block, tid), indices in sorted(self.loads.items()):
            if tid % WARP == WARP - 1:
                continue
            neighbour = self.loads.get((launch, block, tid + 1))
            if not neighbour:
                continue
            for k, (a, b) in enumerate(zip(indices, neighbour, strict=False)):
                if b != a + 1:
                    return (
                        f"load {k + 1} of threads {tid} and {tid + 1} (block {block}) reads "
                        f"x[{a}] and x[{b}]"
                    )
        return None


_lock = threading.Lock()
_active: Record | None = None
_input: Any = None  # the device array whose loads are recorded


def _kernel_thread() -> Any:
    thread = threading.current_thread()
    return thread if hasattr(thread, "_manager") else None


def _is_global(array: Any) -> bool:
    from numba.cuda.simulator.cudadrv.devicearray import (
        FakeCUDAArray,
        FakeWithinKernelCUDAArray,
    )

    return isinstance(array, (FakeCUDAArray, FakeWithinKernelCUDAArray))


def _dtype_kind(array: Any) -> str:
    inner = getattr(array, "_item", array)
    return getattr(getattr(inner, "_ary", inner), "dtype", None).kind


@contextlib.contextmanager
def recording(x: Any) -> Iterator[Record]:
    """Patch the simulator for the duration of one call; loads of ``x`` are recorded."""
    global _active, _input
    from numba.cuda.simulator import kernel, kernelapi
    from numba.cuda.simulator.cudadrv import devicearray

    record = Record()
    fake_array = devicearray.FakeCUDAArray
    saved = {
        (kernel.FakeCUDAKernel, "__call__"): kernel.FakeCUDAKernel.__call__,
        (fake_array, "__getitem__"): fake_array.__getitem__,
        (fake_array, "__setitem__"): fake_array.__setitem__,
        (fake_array, "copy_to_host"): fake_array.copy_to_host,
        (kernelapi.FakeCUDAModule, "threadfence"): kernelapi.FakeCUDAModule.threadfence,
    }
    for name in ("add", "sub", "max", "min", "inc", "dec", "exch", "cas", "compare_and_swap"):
        if hasattr(kernelapi.FakeCUDAAtomic, name):
            saved[(kernelapi.FakeCUDAAtomic, name)] = getattr(kernelapi.FakeCUDAAtomic, name)
    patches = _patches(record, saved)
    for (owner, name), fn in patches.items():
        setattr(owner, name, fn)
    _active, _input = record, x
    try:
        yield record
    finally:
        for (owner, name), fn in saved.items():
            setattr(owner, name, fn)
        _active, _input = None, None


def _patches(record: Record, saved: dict[tuple[type, str], Any]) -> dict[tuple[type, str], Any]:
    from numba.cuda.simulator import kernel, kernelapi
    from numba.cuda.simulator.cudadrv import devicearray

    fake_array = devicearray.FakeCUDAArray
    original = {name: fn for (_owner, name), fn in saved.items()}

    def launch(self: Any, *args: Any) -> Any:
        if not self._device and _kernel_thread() is None:
            blocks, threads = (
                int(cudasim_shim.launch_size(d)) for d in (self.grid_dim, self.block_dim)
            )
            record.launches.append((blocks, threads))
        return original["__call__"](self, *args)

    def getitem(self: Any, idx: Any) -> Any:
        value = original["__getitem__"](self, idx)
        thread = _kernel_thread()
        if thread is None:
            if not isinstance(value, (fake_array, devicearray.np.ndarray)):
                record.host_values += 1
        elif self is _input and isinstance(idx, (int, devicearray.np.integer)):
            key = (len(record.launches), thread.blockIdx.x, thread.thread_id)
            with _lock:
                seen = record.loads.setdefault(key, [])
                if len(seen) < LOADS_KEPT:
                    seen.append(int(idx))
        return value

    def setitem(self: Any, idx: Any, val: Any) -> Any:
        thread = _kernel_thread()
        if thread is not None:
            thread._qz_unfenced_store = True
        return original["__setitem__"](self, idx, val)

    def copy_to_host(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _kernel_thread() is None:
            record.host_values += int(self.size)
        return original["copy_to_host"](self, *args, **kwargs)

    def threadfence(self: Any) -> None:
        thread = _kernel_thread()
        if thread is not None:
            thread._qz_unfenced_store = False

    patches: dict[tuple[type, str], Any] = {
        (kernel.FakeCUDAKernel, "__call__"): launch,
        (fake_array, "__getitem__"): getitem,
        (fake_array, "__setitem__"): setitem,
        (fake_array, "copy_to_host"): copy_to_host,
        (kernelapi.FakeCUDAModule, "threadfence"): threadfence,
    }
    for (owner, name), fn in saved.items():
        if owner is kernelapi.FakeCUDAAtomic:
            patches[(owner, name)] = _atomic(record, name, fn)
    return patches


def _atomic(record: Record, name: str, method: Any) -> Any:
    def wrapper(self: Any, array: Any, *args: Any) -> Any:
        thread = _kernel_thread()
        if thread is not None and _is_global(array):
            where = f"block {thread.blockIdx.x}, thread {thread.thread_id}"
            with _lock:
                record.atomics += 1
                if name in ("add", "sub") and _dtype_kind(array) == "f":
                    record.float_atomics.append(where)
                elif getattr(thread, "_qz_unfenced_store", False):
                    record.unfenced_atomics.append(where)
        return method(self, array, *args)

    wrapper.__name__ = method.__name__
    return wrapper
