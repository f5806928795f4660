"""Compile-only checks of softmax.cu beyond the shared ones in ``_cudakit``.

- ``exp_calls``: every ``expf``/``__expf``/``exp``/``exp2f``/``exp2`` call in the source and
  whether its argument is a difference (``expf(v - m)``), the form that cannot overflow.
- ``unsynchronised_handoffs``: in a kernel's PTX, a load from shared memory that follows a
  store to shared memory with no barrier (``bar.sync``, or ``bar.warp.sync``) in between, in
  program order. That is how one warp's stored (m, d) state is read by another thread before
  the barrier that makes it visible.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import cu_source
import ptx_checks

_EXP_CALL = re.compile(r"\b(__expf|expf|exp|exp2f|exp2)\s*\(")
_BINARY_MINUS = re.compile(r"[\w)\]]\s*-\s*[\w(.]")
_SHARED_LD = re.compile(r"\bld(?:\.\w+)*\.shared\b")
_SHARED_ST = re.compile(r"\bst(?:\.\w+)*\.shared\b")
_BARRIER = re.compile(r"\b(?:bar|barrier)(?:\.cta)?\.(?:sync|red)\b|\bbar\.warp\.sync\b")


@dataclass(frozen=True)
class ExpCall:
    line: int
    text: str  # e.g. "expf(v - m)"
    difference: bool


def exp_calls(source: str) -> list[ExpCall]:
    """Each exp-family call with its argument (comments and strings ignored)."""
    text = cu_source.strip(source)
    found = []
    for m in _EXP_CALL.finditer(text):
        open_paren = m.end() - 1
        depth, end = 0, open_paren
        for end in range(open_paren, len(text)):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                break
        argument = text[open_paren + 1 : end]
        line = text.count("\n", 0, m.start()) + 1
        shown = " ".join(f"{m.group(1)}({argument})".split())
        found.append(ExpCall(line, shown, bool(_BINARY_MINUS.search(argument))))
    return found


def unsynchronised_handoffs(kernel: ptx_checks.Kernel) -> list[str]:
    """PTX lines that load shared memory after a shared store with no barrier between."""
    pending_store = False
    found = []
    for line in kernel.lines:
        if _BARRIER.search(line):
            pending_store = False
        elif _SHARED_ST.search(line):
            pending_store = True
        elif _SHARED_LD.search(line) and pending_store:
            found.append(" ".join(line.split()))
    return found
