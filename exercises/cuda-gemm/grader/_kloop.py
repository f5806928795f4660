"""The K loop of a tiled GEMM in PTX: shared-memory stores, loads and barriers in order.

A loop (backward branch, see ``ptx_checks.kernels``) that loads global memory, stores to
shared memory and loads from it is a K loop. Read as a cycle (the end of one iteration runs
into the start of the next), every store to shared memory must be separated by a barrier
from the shared loads after it (the tile is complete before anyone reads it), and every
shared load from the next store (everyone has finished reading before the tile is
overwritten). ``cp.async`` copies into shared memory count as stores.
"""

from __future__ import annotations

import re

import ptx_checks

_ST = re.compile(r"\b(?:st|atom|red)(?:\.\w+)*\.shared\b|\bcp\.async(?:\.\w+)*\.shared\b")
_LD = re.compile(r"\b(?:ld|ldmatrix)(?:\.\w+)*\.shared\b")
_GLOBAL_LD = re.compile(r"\bld(?:\.\w+)*\.global\b|\bcp\.async(?:\.\w+)*\.global\b")
_BAR = re.compile(r"\b(?:bar|barrier)(?:\.cta)?\.(?:sync|red)\b|\bcp\.async\.wait_all\b")


def _events(lines: list[str]) -> str:
    """'S' (shared store), 'L' (shared load), 'B' (barrier) in order."""
    out = []
    for line in lines:
        code = line.split("//", 1)[0]
        if _BAR.search(code) and "bar.warp" not in code:
            out.append("B")
        elif _ST.search(code):
            out.append("S")
        elif _LD.search(code):
            out.append("L")
    return "".join(out)


def k_loops(kernel: ptx_checks.Kernel) -> list[tuple[int, int]]:
    """Loops that load global memory and both store to and load from shared memory."""
    found = []
    for start, end in kernel.loops:
        body = kernel.lines[start : end + 1]
        events = _events(body)
        if "S" in events and "L" in events and any(_GLOBAL_LD.search(ln) for ln in body):
            found.append((start, end))
    return found


def missing_barrier(kernel: ptx_checks.Kernel, loop: tuple[int, int]) -> str | None:
    """Going round the loop, a shared access of one kind followed by the other with no
    barrier in between: "store-then-load" or "load-then-store"; None when separated."""
    events = _events(kernel.lines[loop[0] : loop[1] + 1])
    if not events:
        return None
    cycle = events + events  # the end of one iteration runs into the next
    last = None  # the last shared access kind since a barrier
    for e in cycle:
        if e == "B":
            last = None
        elif last is not None and last != e:
            return "store-then-load" if last == "S" else "load-then-store"
        else:
            last = e
    return None
