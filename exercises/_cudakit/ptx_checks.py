"""Compile-only checks of a CUDA C++ track: nvcc, ptxas resource usage, the shape of the PTX.

Without a GPU nothing can run, so the CPU route reads what nvcc produced:
- ``ptxas -v`` resource lines (registers, shared memory, spills) per kernel;
- the PTX of each kernel, split into loops (a backward branch to an earlier label), to check
  for the structure a correct block reduction has: a grid-stride loop that loads global
  memory, a barrier (``bar.sync``) inside every loop that both reads and writes shared
  memory, warp shuffles (``shfl.sync``) whose constant offsets are 16, 8, 4, 2, 1, and no
  float atomic add on global memory (``atom``/``red`` ``.add.f32``: a finish whose order, and
  so whose rounding, changes every run).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ARCH = "sm_80"
OUTCOMES = pytest.StashKey[dict[str, str]]()  # nodeid -> outcome, filled by conftest
COMPILE_TIMEOUT_S = 120

_ENTRY = re.compile(r"^(?:\.visible\s+|\.weak\s+)?\.entry\s+(\S+?)\s*\(", re.M)
_LABEL = re.compile(r"^\s*(\$?[\w$]+):\s*$")
_BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$?[\w$]+)\s*;")
_SHARED_LD = re.compile(r"\b(?:ld|atom|red)(?:\.\w+)*\.shared\b")
_SHARED_ST = re.compile(r"\b(?:st|atom|red)(?:\.\w+)*\.shared\b")
_GLOBAL_LD = re.compile(r"\bld(?:\.\w+)*\.global\b|\bld\.global\b")
_BARRIER = re.compile(r"\b(?:bar|barrier)(?:\.cta)?\.(?:sync|red|arrive)\b|\bbar\.warp\.sync\b")
_SHFL = re.compile(r"\bshfl\.sync\.(up|down|bfly|idx)\.b32\s+([^;]+);")
_MOV_IMM = re.compile(r"\bmov\.[bsu]32\s+(%r\d+),\s*(-?(?:0[xX][0-9a-fA-F]+|\d+))\s*;")
_FLOAT_ATOMIC = re.compile(r"\b(?:atom|red)(?:\.\w+)*\.add(?:\.\w+)*\.(?:f16|bf16|f32|f64)\b")
_PTXAS_FUNC = re.compile(r"Function properties for (\S+)")
_PTXAS_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_USED = re.compile(r"Used (\d+) registers(?:.*?, (\d+) bytes smem)?")


@dataclass
class Build:
    ok: bool
    log: str
    ptx: str = ""
    library: Path | None = None


@dataclass
class KernelResources:
    registers: int = 0
    smem_bytes: int = 0
    spill_bytes: int = 0


@dataclass
class Kernel:
    name: str
    lines: list[str]
    loops: list[tuple[int, int]] = field(default_factory=list)  # (label line, branch line)


def nvcc() -> str | None:
    return shutil.which("nvcc")


def compile_cu(source: Path, workdir: Path, arch: str = ARCH) -> Build:
    """nvcc -> PTX (kept) and a shared library, with ptxas -v resource output."""
    workdir.mkdir(parents=True, exist_ok=True)
    library = workdir / f"lib{source.stem}.so"
    command = [
        nvcc() or "nvcc",
        f"-arch={arch}",
        "-O3",
        "-lineinfo",
        "-Xptxas",
        "-v",
        "-shared",
        "-Xcompiler",
        "-fPIC",
        "--keep",
        "--keep-dir",
        str(workdir),
        "-o",
        str(library),
        str(source),
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, cwd=workdir
        )
    except subprocess.TimeoutExpired:
        return Build(False, f"nvcc took more than {COMPILE_TIMEOUT_S} s")
    log = (done.stdout + done.stderr).strip()
    if done.returncode != 0:
        return Build(False, log)
    ptx_files = sorted(workdir.glob("*.ptx"))
    ptx = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in ptx_files)
    return Build(True, log, ptx, library)


def short_name(mangled: str) -> str:
    """``_ZN..9block_sumEPKfPfi`` -> ``block_sum`` (c++filt when present)."""
    tool = shutil.which("c++filt")
    if tool:
        try:
            done = subprocess.run([tool, mangled], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return mangled
        name = done.stdout.strip().replace("(anonymous namespace)::", "").split("(", 1)[0]
        return name.rsplit("::", 1)[-1] or mangled
    return mangled


def compile_errors(log: str, limit: int = 8) -> str:
    lines = [ln for ln in log.splitlines() if "error" in ln.lower()] or log.splitlines()
    return "\n".join(lines[:limit])


def resources(log: str) -> dict[str, KernelResources]:
    """Parse ``ptxas -v`` output into per-kernel (mangled name) resources."""
    out: dict[str, KernelResources] = {}
    current: KernelResources | None = None
    for line in log.splitlines():
        if m := _PTXAS_FUNC.search(line):
            current = out.setdefault(m.group(1), KernelResources())
        elif current is not None and (m := _PTXAS_SPILL.search(line)):
            current.spill_bytes = int(m.group(1)) + int(m.group(2))
        elif current is not None and (m := _PTXAS_USED.search(line)):
            current.registers = int(m.group(1))
            current.smem_bytes = int(m.group(2) or 0)
    return out


def kernels(ptx: str) -> list[Kernel]:
    """Each ``.entry`` of the PTX with its body lines and loops."""
    found = []
    starts = [(m.start(), m.group(1)) for m in _ENTRY.finditer(ptx)]
    for i, (start, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(ptx)
        lines = ptx[start:end].splitlines()
        labels = {}
        for j, line in enumerate(lines):
            if m := _LABEL.match(line):
                labels[m.group(1)] = j
        loops = []
        for j, line in enumerate(lines):
            m = _BRANCH.search(line)
            if m and m.group(1) in labels and labels[m.group(1)] <= j:
                loops.append((labels[m.group(1)], j))
        found.append(Kernel(short_name(name), lines, loops))
    return found


def _body(kernel: Kernel, loop: tuple[int, int]) -> list[str]:
    return kernel.lines[loop[0] : loop[1] + 1]


def has_grid_stride_loop(kernel: Kernel) -> bool:
    """Some loop loads from global memory."""
    return any(any(_GLOBAL_LD.search(ln) for ln in _body(kernel, lp)) for lp in kernel.loops)


def unsynchronised_shared_loops(kernel: Kernel) -> list[int]:
    """Line numbers (in the kernel) of loops that read and write shared memory without a
    barrier inside: the threads of one step read what others write in the next."""
    bad = []
    for loop in kernel.loops:
        body = _body(kernel, loop)
        reads = any(_SHARED_LD.search(ln) for ln in body)
        writes = any(_SHARED_ST.search(ln) for ln in body)
        if reads and writes and not any(_BARRIER.search(ln) for ln in body):
            bad.append(loop[0])
    return bad


def has_barrier(kernel: Kernel) -> bool:
    return any(_BARRIER.search(ln) for ln in kernel.lines)


def shuffle_offsets(kernel: Kernel) -> tuple[list[int], int]:
    """(constant offsets of up/down/bfly shuffles, number whose offset is not a constant)."""
    constants: dict[str, int | None] = {}
    for line in kernel.lines:
        if m := _MOV_IMM.search(line):
            reg, value = m.group(1), int(m.group(2), 0)
            constants[reg] = value if reg not in constants else None  # defined twice: unknown
    known, unknown = [], 0
    for line in kernel.lines:
        m = _SHFL.search(line)
        if not m or m.group(1) == "idx":
            continue
        operands = [op.strip() for op in m.group(2).split(",")]
        offset = operands[2] if len(operands) > 2 else ""
        if re.fullmatch(r"-?\d+", offset):
            known.append(int(offset))
        elif constants.get(offset) is not None:
            known.append(constants[offset])  # type: ignore[arg-type]
        else:
            unknown += 1
    return known, unknown


def constant_shuffle_offsets(kernels: list[Kernel]) -> list[int]:
    """The constant offsets of the up/down/bfly shuffles of all ``kernels``."""
    return [o for kernel in kernels for o in shuffle_offsets(kernel)[0]]


def float_atomics(kernel: Kernel) -> list[str]:
    """PTX lines that add floats atomically outside shared memory (``atom.global.add.f32``,
    ``red.global.add.f32``, generic ``atom.add.f32``)."""
    found = []
    for line in kernel.lines:
        m = _FLOAT_ATOMIC.search(line)
        if m and ".shared" not in m.group(0):
            found.append(line.strip())
    return found


def has_shuffle(kernel: Kernel) -> bool:
    return any(_SHFL.search(ln) for ln in kernel.lines)
