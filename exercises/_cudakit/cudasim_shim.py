"""Additions to the numba-cuda simulator used when grading the numba track on a CPU.

The simulator (``NUMBA_ENABLE_CUDASIM=1``) runs every CUDA thread of a block as a Python
thread. :func:`install` patches ``numba.cuda.simulator`` with:

1. A faster block scheduler. The stock ``BlockManager`` busy-polls every thread to find out
   when all of them wait in ``syncthreads()``; here a counting barrier does the same job with
   the stock semantics: a barrier opens when every live (not yet returned) thread of the
   block waits in it, and an exception in any thread aborts the block and is re-raised with
   the thread and block ids (``tid=[x, y, z] ctaid=[x, y, z]: ...``).
2. The warp intrinsics the simulator lacks: ``shfl_sync``, ``shfl_up_sync``,
   ``shfl_down_sync``, ``shfl_xor_sync``, ``syncwarp``, ``ballot_sync``, ``any_sync``,
   ``all_sync``, ``activemask`` and ``lanemask_lt``. The lanes named in ``mask`` meet at a
   per-warp exchange and each reads its source lane's value with the PTX rules: offsets and
   lane ids are taken modulo 32 (``b[4:0]``); a source outside the warp gives the caller's
   own value; a source lane that exists but is not in the mask is undefined on a GPU, here
   NaN (an error for integers).
3. A shared-memory race detector (``cudasim_racecheck``, like ``compute-sanitizer --tool
   racecheck``).
4. Deadlock reports: threads waiting in ``syncthreads()`` while others wait in a shuffle
   whose lanes never arrive (or lanes that returned early) give an error at once.
5. Divergent barriers: every thread of the block must reach the same ``syncthreads()``.
   A thread that returns while others wait in one, or threads waiting at different
   ``syncthreads()`` calls, give an error naming the line (on a GPU: undefined behaviour).
   Before a kernel's first launch its module is also read (``py_source``): a barrier under
   a thread-dependent ``if`` or ``while`` is reported as such, before the threads that skip
   it can show up only as a shared-memory race.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

WARP = 32
_FULL = 0xFFFFFFFF
_installed = False


class _Warp:
    """One round of a warp-level exchange at a time."""

    def __init__(self) -> None:
        self.expected: frozenset[int] | None = None
        self.values: dict[int, Any] = {}
        self.draining = False
        self.readers = 0
        self.waiters: list[Any] = []  # threads blocked until this round completes
        self.epoch = 0  # completed rounds (warp-level synchronisations)


class _Block:
    """State of one simulated thread block, guarded by ``lock``. Each thread sleeps on its own
    condition variable, so a wake-up touches only the threads it releases."""

    def __init__(self, nthreads: int) -> None:
        self.lock = threading.Lock()
        self.main_cv = threading.Condition(self.lock)  # the launching thread waits here
        self.threads: list[Any] = []
        self.nthreads = nthreads
        self.live = nthreads
        self.blocked = 0  # threads waiting with no wake-up pending
        self.at_barrier: list[Any] = []
        self.epoch = 0  # barriers passed
        self.warps: dict[int, _Warp] = {}
        self.shared: dict[int, dict[int, list[Any]]] = {}  # race-detector records
        self.exited: list[int] = []  # thread ids that returned, in order
        self.abort = False
        self.error: BaseException | None = None
        self.error_tb: Any = None

    # --- all methods are called with the lock held -------------------------------------

    def block(self, thread: Any) -> None:
        thread._qz_blocked = True
        self.blocked += 1

    def wake(self, threads: list[Any]) -> None:
        for t in threads:
            if t._qz_blocked:
                t._qz_blocked = False
                self.blocked -= 1
                t._qz_gate.release()

    def divergent_barrier(self) -> str | None:
        """Why the threads now waiting in syncthreads() do not form a valid barrier, if so."""
        if not self.at_barrier:
            return None
        first = min(self.at_barrier, key=lambda t: t.thread_id)
        if self.exited:
            return (
                f"divergent barrier: thread {self.exited[0]} returned without reaching the "
                f"cuda.syncthreads() at {first._qz_site} where thread {first.thread_id} waits"
            )
        sites = sorted({t._qz_site for t in self.at_barrier})
        if len(sites) > 1:
            return f"divergent barrier: threads of one block wait at {' and '.join(sites)}"
        return None

    def try_release_barrier(self) -> None:
        if self.at_barrier and len(self.at_barrier) == self.live:
            why = self.divergent_barrier()
            if why is not None:
                self.fail(RuntimeError(why + _DIVERGENT_HINT), None)
                return
            waiting, self.at_barrier = self.at_barrier, []
            self.epoch += 1
            self.wake(waiting)

    def warp_epoch(self, warp: int) -> int:
        state = self.warps.get(warp)
        return state.epoch if state else 0

    def check_deadlock(self) -> None:
        """Every live thread is blocked and the barrier cannot open: say who waits where."""
        if self.abort or self.live == 0 or self.blocked < self.live:
            return
        self.try_release_barrier()
        if self.blocked < self.live:
            return
        parts = []
        if self.at_barrier:
            first = min(t.thread_id for t in self.at_barrier)
            parts.append(f"{len(self.at_barrier)} thread(s) wait in syncthreads() (tid {first})")
        for w, state in sorted(self.warps.items()):
            if state.values and not state.draining:
                missing = sorted(set(state.expected or ()) - set(state.values))
                parts.append(
                    f"lanes {_ranges(sorted(state.values))} of warp {w} wait in a warp "
                    f"shuffle/vote for lanes {_ranges(missing)}, which returned or wait elsewhere"
                )
        self.fail(
            RuntimeError(
                "deadlock: "
                + "; ".join(parts)
                + " (a barrier or shuffle inside a branch that not every thread takes)"
            ),
            None,
        )

    def fail(self, exc: BaseException, tb: Any) -> None:
        if self.error is None:
            self.error, self.error_tb = exc, tb
        self.abort = True
        self.wake([t for t in self.threads if t._qz_blocked])
        self.main_cv.notify()


_DIVERGENT_HINT = (
    " (a cuda.syncthreads() inside an `if` or loop that not every thread of the block takes: "
    "undefined behaviour on a GPU, a hang or a silent race; put the barrier where every "
    "thread reaches it, after the if)"
)


def _call_site() -> str:
    """``reduce.py line 31``: the first caller outside numba and the grader."""
    import numba

    skip = (__file__.rsplit("/", 1)[0], numba.__file__.rsplit("/", 1)[0])
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(skip) and "/numba/" not in name:
            return f"{name.rsplit('/', 1)[-1]} line {frame.f_lineno}"
        frame = frame.f_back
    return "an unknown line"


def _ranges(ids: list[int]) -> str:
    """[0, 1, 2, 5] -> "[0-2, 5]"."""
    runs: list[list[int]] = []
    for i in ids:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return "[" + ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs) + "]"


def _current() -> tuple[Any, _Block]:
    thread = threading.current_thread()
    block = getattr(getattr(thread, "_manager", None), "_qz_block", None)
    if block is None:
        raise RuntimeError("warp intrinsics can only be called inside a simulated kernel")
    return thread, block


def _sleep(thread: Any, block: _Block) -> None:
    """Called with the lock held after ``block.block(thread)``: wait until woken. The lock is
    released meanwhile; each thread sleeps on its own gate (a lock that the waker releases),
    so a barrier wakes each thread with one futex call and no contention."""
    block.check_deadlock()
    block.lock.release()  # every block() is matched by one wake(), which opens the gate once
    try:
        thread._qz_gate.acquire()
    finally:
        block.lock.acquire()
    if block.abort:
        raise RuntimeError("block aborted (another thread failed)")


# --- block scheduling -------------------------------------------------------------------


def _syncthreads(self: Any) -> None:
    block: _Block = self._manager._qz_block
    with block.lock:
        if block.abort:
            raise RuntimeError("abort flag set on syncthreads call")
        self.syncthreads_blocked = True
        self._qz_site = _call_site()
        block.at_barrier.append(self)
        block.block(self)
        block.try_release_barrier()
        try:
            _sleep(self, block)
        finally:
            self.syncthreads_blocked = False


def _make_thread_run(original_run: Callable[[Any], None]) -> Callable[[Any], None]:
    def run(self: Any) -> None:
        try:
            original_run(self)  # stores a failure in self.exception, prefixed with tid/ctaid
        finally:
            block: _Block = self._manager._qz_block
            with block.lock:
                block.live -= 1
                block.exited.append(self.thread_id)
                if self.exception is not None and not block.abort:
                    block.fail(*self.exception)
                why = None if block.abort else block.divergent_barrier()
                if why is not None:
                    block.fail(RuntimeError(why + _DIVERGENT_HINT), None)
                block.try_release_barrier()
                block.check_deadlock()
                if block.live == 0:
                    block.main_cv.notify()

    return run


_SOURCE_VERDICTS: dict[Any, str | None] = {}  # kernel code object -> verdict


def static_divergence(kernel: Callable[..., Any]) -> str | None:
    """Why ``kernel`` (a Python function) has a barrier that only some threads reach, read from
    its module's source once per kernel; None when none is found or the source is unreadable."""
    code = getattr(kernel, "__code__", None)
    if code in _SOURCE_VERDICTS:
        return _SOURCE_VERDICTS[code]
    import os

    import py_source

    why = None
    try:
        with open(code.co_filename, encoding="utf-8") as handle:
            findings = py_source.divergent_barriers(handle.read(), kernel.__name__)
    except (AttributeError, OSError, UnicodeDecodeError):
        findings = []
    if findings:
        f = findings[0]
        why = (
            f"divergent barrier: {f.barrier} at {os.path.basename(code.co_filename)} line "
            f"{f.line} (in {f.function}) is inside `{f.statement}:`, which not every thread of "
            "the block takes"
        )
    _SOURCE_VERDICTS[code] = why
    return why


def _make_manager_run(thread_cls: type) -> Callable[..., None]:
    def run(self: Any, grid_point: tuple[int, ...], *args: Any) -> None:
        why = static_divergence(self._f)
        if why is not None:
            raise RuntimeError(why + _DIVERGENT_HINT)
        dims = tuple(self._block_dim)
        block = _Block(math.prod(dims))
        self._qz_block = block

        def target() -> None:
            self._f(*args)

        threads = []
        for block_point in np.ndindex(*dims):
            t = thread_cls(target, self, grid_point, block_point, self._debug)
            t._qz_blocked = False
            t._qz_gate = threading.Lock()
            t._qz_gate.acquire()  # closed until a barrier or exchange opens it
            threads.append(t)
        block.threads = threads
        for t in threads:
            t.start()
        with block.lock:
            while block.live > 0 and not block.abort:
                block.main_cv.wait()
        if block.abort:
            for t in threads:  # let the others see the abort before the next launch
                t.join(timeout=1.0)
            assert block.error is not None
            raise block.error.with_traceback(block.error_tb)

    return run


# --- warp intrinsics ---------------------------------------------------------------------


def _collect(mask: int, value: Any, name: str) -> dict[int, Any]:
    """Meet the other lanes of ``mask``; returns every participant's value (lane -> value)."""
    thread, block = _current()
    lane, warp_id = thread.thread_id % WARP, thread.thread_id // WARP
    mask = int(mask) & _FULL
    with block.lock:
        if block.abort:
            raise RuntimeError("block aborted (another thread failed)")
        existing = min(WARP, block.nthreads - warp_id * WARP)
        lanes = frozenset(i for i in range(existing) if (mask >> i) & 1)
        if lane not in lanes:
            raise RuntimeError(f"{name}: the mask {mask:#010x} does not include lane {lane}")
        warp = block.warps.setdefault(warp_id, _Warp())
        if warp.draining:  # the previous round is still being read
            warp.waiters.append(thread)
            block.block(thread)
            _sleep(thread, block)
        if warp.expected is None:
            warp.expected = lanes
        elif warp.expected != lanes:
            raise RuntimeError(
                f"{name}: lanes of warp {warp_id} disagree on the mask (lane {lane}: {mask:#010x})"
            )
        warp.values[lane] = value
        if len(warp.values) == len(lanes):
            warp.draining = True
            warp.readers = len(lanes)
            warp.epoch += 1
            waiting, warp.waiters = warp.waiters, []
            block.wake(waiting)
        else:
            warp.waiters.append(thread)
            block.block(thread)
            _sleep(thread, block)
        values = dict(warp.values)
        warp.readers -= 1
        if warp.readers == 0:  # the last reader opens the next round
            warp.values, warp.expected, warp.draining = {}, None, False
            waiting, warp.waiters = warp.waiters, []
            block.wake(waiting)
        return values


def _exchange(mask: int, value: Any, source: Callable[[int], int | None], name: str) -> Any:
    values = _collect(mask, value, name)
    thread = threading.current_thread()
    src = source(thread.thread_id % WARP)
    if src is None or src >= WARP:
        return value
    if src in values:
        return values[src]
    if isinstance(value, (float, np.floating)):
        return type(value)(math.nan)
    raise RuntimeError(f"{name} reads lane {src}, which is not in the mask (undefined on a GPU)")


def shfl_sync(self: Any, mask: int, value: Any, src_lane: int) -> Any:
    return _exchange(mask, value, lambda lane: int(src_lane) & 31, "shfl_sync")


def shfl_up_sync(self: Any, mask: int, value: Any, delta: int) -> Any:
    def src(lane: int) -> int | None:
        j = lane - (int(delta) & 31)
        return j if j >= 0 else None

    return _exchange(mask, value, src, "shfl_up_sync")


WIDE_OFFSETS: set[int] = set()  # shuffle offsets outside 0..31 seen (for diagnosis)


def shfl_down_sync(self: Any, mask: int, value: Any, delta: int) -> Any:
    if not 0 <= int(delta) < WARP:
        WIDE_OFFSETS.add(int(delta))
    return _exchange(mask, value, lambda lane: lane + (int(delta) & 31), "shfl_down_sync")


def shfl_xor_sync(self: Any, mask: int, value: Any, lane_mask: int) -> Any:
    return _exchange(mask, value, lambda lane: lane ^ (int(lane_mask) & 31), "shfl_xor_sync")


def syncwarp(self: Any, mask: int = _FULL) -> None:
    _collect(mask, None, "syncwarp")


def ballot_sync(self: Any, mask: int, predicate: Any) -> int:
    values = _collect(mask, bool(predicate), "ballot_sync")
    return sum(1 << lane for lane, p in values.items() if p)


def any_sync(self: Any, mask: int, predicate: Any) -> bool:
    return any(_collect(mask, bool(predicate), "any_sync").values())


def all_sync(self: Any, mask: int, predicate: Any) -> bool:
    return all(_collect(mask, bool(predicate), "all_sync").values())


def activemask(self: Any) -> int:
    thread, block = _current()
    existing = min(WARP, block.nthreads - (thread.thread_id // WARP) * WARP)
    return (1 << existing) - 1


def lanemask_lt(self: Any) -> int:
    return (1 << (threading.current_thread().thread_id % WARP)) - 1


def launch_size(dim: Any) -> int:
    """The number of blocks or threads of a launch dimension (an int or a tuple)."""
    if isinstance(dim, int):
        return dim
    total = 1
    for d in tuple(dim):
        total *= int(d)
    return total


def install() -> None:
    """Patch the simulator (idempotent). numba.cuda must already run in simulator mode."""
    global _installed
    if _installed:
        return
    from numba.cuda.core import config

    if not config.ENABLE_CUDASIM:
        raise RuntimeError("the numba-cuda simulator is not enabled (NUMBA_ENABLE_CUDASIM=1)")
    from cudasim_racecheck import make_shared_array, untracked
    from numba.cuda.simulator import kernel, kernelapi

    kernel.BlockThread.syncthreads = _syncthreads
    kernel.BlockThread.run = _make_thread_run(kernel.BlockThread.run)
    kernel.BlockManager.run = _make_manager_run(kernel.BlockThread)
    kernelapi.FakeCUDAShared.array = make_shared_array(kernelapi.FakeCUDAShared.array)
    for name in dir(kernelapi.FakeCUDAAtomic):
        if not name.startswith("_"):
            method = getattr(kernelapi.FakeCUDAAtomic, name)
            setattr(kernelapi.FakeCUDAAtomic, name, untracked(method))
    intrinsics = (shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync, syncwarp)
    votes = (ballot_sync, any_sync, all_sync, activemask, lanemask_lt)
    for fn in (*intrinsics, *votes):
        setattr(kernelapi.FakeCUDAModule, fn.__name__, fn)
    _installed = True
