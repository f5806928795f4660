"""What one ``transpose`` call did in the numba-cuda simulator, warp by warp.

While :func:`recording` is active (inside a simulated run: ``cudasim_shim`` installed) every
element access of a global array (a ``FakeCUDAArray``) and of a ``cuda.shared.array`` is
noted with the thread that made it, its byte address and its *site* (file and line in the
user's code, the array, load or store). The simulator runs each CUDA thread as a Python
thread, not in lock step, so the accesses that form one warp-wide instruction are matched
by site and by how many times the thread has executed that site before: the k-th
execution of a site by the 32 lanes of a warp is one instruction (a transpose has no
divergence within a warp except lanes that skip an access at the matrix edge).

From those groups :class:`Record` answers the two questions the grader asks:

- coalescing: within one global load or store instruction, lanes whose ``threadIdx.x``
  differ by one (same ``threadIdx.y``) must touch addresses one element apart, and the
  instruction as a whole must touch few 32-byte sectors for its bytes (lanes are numbered
  ``threadIdx.x`` first, so a block one thread wide is checked too);
- bank conflicts: within one shared-memory instruction, the number of different 4-byte
  words that fall in the same one of the 32 banks (1 is conflict-free; the same word read
  by several lanes is a broadcast, not a conflict).

It also bounds-checks every access of the arrays ``x`` and ``out`` passed to the call
(numpy would wrap a negative index), notes a shared-memory error hit before any barrier, and
notes each launch.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

WARP = 32
BANKS = 32
BANK_BYTES = 4
SECTOR = 32  # bytes: the unit in which a warp's global accesses are served
_HERE = str(Path(__file__).resolve().parent)
_lock = threading.Lock()


@dataclass(frozen=True)
class Access:
    """One element access by one thread."""

    lane: int
    tx: int
    ty: int
    address: int  # bytes (global: a host address of the simulated buffer; shared: offset)
    index: tuple[int, ...]


@dataclass
class Group:
    """The accesses of one warp-wide instruction."""

    space: str  # "global" | "shared"
    kind: str  # "load" | "store"
    array: str  # "x", "out", "a global array" or the shared array's description
    site: str  # "transpose.py line 31"
    block: tuple[int, int, int]
    warp: int
    shape: tuple[int, ...]
    itemsize: int
    accesses: list[Access] = field(default_factory=list)

    def where(self) -> str:
        return f"warp {self.warp} of block {self.block[:2]} at {self.site}"


@dataclass(frozen=True)
class Conflict:
    degree: int  # distinct words in the busiest bank
    bank: int
    lanes: list[int]  # lanes that hit that bank with different words
    group: Group


@dataclass
class Record:
    """What a recorded call did."""

    groups: dict[tuple[Any, ...], Group] = field(default_factory=dict)
    launches: list[tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=list)
    # a shared-memory race or uninitialised read that a thread hit before it had passed any
    # cuda.syncthreads(): the tile is read back with no barrier after the store
    failed_before_barrier: bool = False

    def uncoalesced(self, kind: str) -> tuple[Group, Access, Access] | None:
        """The first global ``kind`` instruction whose neighbouring lanes (threadIdx.x and
        threadIdx.x + 1) touch addresses that are not one element apart."""
        for group in self._sorted("global", kind):
            by_lane = sorted(group.accesses, key=lambda a: a.lane)
            for a, b in itertools.pairwise(by_lane):
                neighbours = b.lane == a.lane + 1 and b.ty == a.ty and b.tx == a.tx + 1
                if neighbours and b.address - a.address != group.itemsize:
                    return group, a, b
        return None

    def scattered(self, kind: str) -> tuple[Group, int, int] | None:
        """The first global ``kind`` instruction that touches more than twice the 32-byte
        sectors its bytes need (plus one for an unaligned start): (group, sectors, needed)."""
        for group in self._sorted("global", kind):
            addresses = {a.address for a in group.accesses}
            if len(addresses) < 2:
                continue
            sectors = len({a // SECTOR for a in addresses})
            needed = -(-len(addresses) * group.itemsize // SECTOR)
            if sectors > 2 * needed + 1:
                return group, sectors, needed
        return None

    def worst_conflict(self) -> Conflict | None:
        """The shared-memory instruction with the most-conflicted bank (None if every one is
        conflict-free)."""
        worst: Conflict | None = None
        for kind in ("store", "load"):
            for group in self._sorted("shared", kind):
                words: dict[int, dict[int, list[int]]] = {}
                for a in group.accesses:
                    word = a.address // BANK_BYTES
                    words.setdefault(word % BANKS, {}).setdefault(word, []).append(a.lane)
                for bank, seen in words.items():
                    if len(seen) > 1 and (worst is None or len(seen) > worst.degree):
                        lanes = sorted(lanes[0] for lanes in seen.values())
                        worst = Conflict(len(seen), bank, lanes, group)
        return worst

    def shared_used(self) -> bool:
        return any(g.space == "shared" for g in self.groups.values())

    def _sorted(self, space: str, kind: str) -> list[Group]:
        keys = sorted((k for k in self.groups if k[1] == space and k[2] == kind), key=str)
        return [self.groups[k] for k in keys]


def _kernel_thread() -> Any:
    thread = threading.current_thread()
    return thread if hasattr(thread, "_manager") else None


def _skip_dirs() -> tuple[str, ...]:
    import numba

    return (_HERE, str(Path(numba.__file__).resolve().parent), "/numba/", "cudasim_")


def _site(skip: tuple[str, ...]) -> tuple[tuple[str, int], str]:
    """(key, label) of the first frame outside numba and the grader: the user's access.
    (The file and line: the bytecode offset of a frame is not stable while Python 3.11
    specialises the code, so two accesses of one array on one line count as one site.)"""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not any(s in name for s in skip):
            label = f"{name.rsplit('/', 1)[-1]} line {frame.f_lineno}"
            return (name, frame.f_lineno), label
        frame = frame.f_back
    return ("?", 0), "an unknown line"


def _element_key(key: Any, ndim: int) -> tuple[int, ...] | None:
    """The integer index tuple of an element access, or None (a slice, a row, ...)."""
    if isinstance(key, (int, np.integer)):
        return (int(key),) if ndim == 1 else None
    if (
        isinstance(key, tuple)
        and len(key) == ndim
        and all(isinstance(k, (int, np.integer)) for k in key)
    ):
        return tuple(int(k) for k in key)
    return None


def _out_of_bounds(name: str, index: tuple[int, ...], shape: tuple[int, ...], kind: str) -> str:
    shown = ", ".join(map(str, index))
    return (
        f"out-of-bounds {kind} {name}[{shown}]: {name} has shape {tuple(shape)}; guard every "
        f"{kind} with the matrix bounds (the last tile of a row or column is partial when "
        "rows or cols is not a multiple of the tile)"
    )


@contextlib.contextmanager
def recording(x: Any, out: Any) -> Iterator[Record]:
    """Patch the simulator for one call; ``x`` and ``out`` are the arrays passed to it."""
    from cudasim_racecheck import TrackedShared
    from numba.cuda.simulator import kernel
    from numba.cuda.simulator.cudadrv import devicearray

    fake = devicearray.FakeCUDAArray
    record = Record()
    skip = _skip_dirs()
    names = {id(x): "x", id(out): "out"}
    saved = {
        (fake, "__getitem__"): fake.__getitem__,
        (fake, "__setitem__"): fake.__setitem__,
        (TrackedShared, "__getitem__"): TrackedShared.__getitem__,
        (TrackedShared, "__setitem__"): TrackedShared.__setitem__,
        (kernel.FakeCUDAKernel, "__call__"): kernel.FakeCUDAKernel.__call__,
    }

    def note(space: str, kind: str, label: str, ary: np.ndarray, index: tuple[int, ...]) -> None:
        thread = _kernel_thread()
        if thread is None:
            return
        site_key, site = _site(skip)
        site_key = (*site_key, space, kind, label if space == "global" else id(ary))
        counts = thread.__dict__.setdefault("_qz_site_counts", {})
        nth = counts.get(site_key, 0)
        counts[site_key] = nth + 1
        # a shared array is taken to start at a bank boundary (any other start shifts every
        # bank by the same amount, which changes no conflict)
        base = ary.__array_interface__["data"][0] if space == "global" else 0
        address = base + sum(i * s for i, s in zip(index, ary.strides, strict=True))
        block = tuple(int(v) for v in (thread.blockIdx.x, thread.blockIdx.y, thread.blockIdx.z))
        warp = thread.thread_id // WARP
        key = (len(record.launches), space, kind, block, warp, site_key, nth)
        access = Access(
            thread.thread_id % WARP,
            int(thread.threadIdx.x),
            int(thread.threadIdx.y),
            address,
            index,
        )
        with _lock:
            group = record.groups.get(key)
            if group is None:
                shape = tuple(ary.shape)
                group = Group(space, kind, label, site, block, warp, shape, ary.itemsize)
                record.groups[key] = group
            group.accesses.append(access)

    def global_access(self: Any, idx: Any, kind: str) -> None:
        if _kernel_thread() is None:
            return
        ary = self._ary
        name = names.get(id(self), "a global array")
        if name != "a global array" and isinstance(idx, (int, np.integer)) and ary.ndim > 1:
            if not 0 <= int(idx) < ary.shape[0]:  # a row x[r] of a 2-D array
                raise IndexError(_out_of_bounds(name, (int(idx),), ary.shape, kind))
            return
        index = _element_key(idx, ary.ndim)
        if index is None:
            return
        if not all(0 <= i < n for i, n in zip(index, ary.shape, strict=True)):
            shown = name if name != "a global array" else "the array"
            raise IndexError(_out_of_bounds(shown, index, ary.shape, kind))
        note("global", kind, name, ary, index)

    def getitem(self: Any, idx: Any) -> Any:
        global_access(self, idx, "load")
        return saved[(fake, "__getitem__")](self, idx)

    def setitem(self: Any, idx: Any, val: Any) -> Any:
        global_access(self, idx, "store")
        return saved[(fake, "__setitem__")](self, idx, val)

    def shared_access(self: Any, key: Any, kind: str) -> None:
        if _kernel_thread() is None:
            return
        ary = self._array
        if isinstance(key, (int, np.integer)) and ary.ndim > 1:
            raise RuntimeError(
                f"{self._label} is {ary.ndim}-D but was indexed with one index "
                f"(tile[i][j]): index it as tile[i, j] (one subscript with a tuple); the "
                "grader's shared-memory checks follow elements, not rows"
            )
        index = _element_key(key, ary.ndim)
        if index is not None and all(0 <= i < n for i, n in zip(index, ary.shape, strict=True)):
            note("shared", kind, f"the shared array of shape {ary.shape}", ary, index)

    def shared_get(self: Any, key: Any) -> Any:
        shared_access(self, key, "load")
        try:
            return saved[(TrackedShared, "__getitem__")](self, key)
        except RuntimeError:
            thread = _kernel_thread()
            if thread is not None and thread._manager._qz_block.epoch == 0:
                record.failed_before_barrier = True
            raise

    def shared_set(self: Any, key: Any, value: Any) -> None:
        shared_access(self, key, "store")
        saved[(TrackedShared, "__setitem__")](self, key, value)

    def launch(self: Any, *args: Any) -> Any:
        if not self._device and _kernel_thread() is None:
            record.launches.append((tuple(self.grid_dim), tuple(self.block_dim)))
        return saved[(kernel.FakeCUDAKernel, "__call__")](self, *args)

    patches = {
        (fake, "__getitem__"): getitem,
        (fake, "__setitem__"): setitem,
        (TrackedShared, "__getitem__"): shared_get,
        (TrackedShared, "__setitem__"): shared_set,
        (kernel.FakeCUDAKernel, "__call__"): launch,
    }
    for (owner, name), fn in patches.items():
        setattr(owner, name, fn)
    try:
        yield record
    finally:
        for (owner, name), fn in saved.items():
            setattr(owner, name, fn)
