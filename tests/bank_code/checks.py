"""Checking the bank's code blocks: Python run, C and C++ compiled (and run when they hold a
`main`), CUDA compiled, shell parsed. Blocks are checked two at a time, and a block that
passed before with the same text, architecture and tool version is not checked again.

C and C++ blocks see the standard library, CUDA blocks the runtime and the half types, as
the answers assume without writing the includes. A C++ block named in HARNESSES is the
behaviour-tested kind: it is built with a harness's `main` appended, under the address
and undefined-behaviour sanitizers, and run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from quizzer.bank.code_blocks import CodeBlock
from tests.bank_code.blocks import python_prelude

C_HEADERS = ("stdio.h", "stdlib.h", "string.h", "stdint.h", "stddef.h", "math.h", "pthread.h")
CUDA_HEADERS = ("cstdint", "cstdio", "cuda_runtime.h", "cuda_fp16.h", "cuda_bf16.h")
TOOLS = {"python": "python", "cpp": "g++", "c": "gcc", "cuda": "nvcc", "bash": "bash"}
WORKERS = 2
PY_TIMEOUT_S = 60
COMPILE_TIMEOUT_S = 300
RUN_TIMEOUT_S = 20
RUNNER = Path(__file__).with_name("fork_runner.py")
HARNESS_DIR = Path(__file__).with_name("harness")
# block label -> (harness file in HARNESS_DIR, extra compiler flags)
HARNESSES: dict[str, tuple[str, tuple[str, ...]]] = {
    "algo-code-memory-pool#0": ("memory_pool.cpp", ()),
    "algo-code-ring-buffer-spsc#0": ("spsc_ring.cpp", ()),
    "algo-code-smart-pointer-singleton#0": ("shared_ptr.cpp", ()),
    "algo-code-smart-pointer-singleton#1": ("singletons.cpp", ("-DSINGLETON=Config",)),
    "cpp-implement-shared-ptr#0": ("shared_ptr.cpp", ()),
    "cpp-lru-cache-approach#0": ("lru_cache.cpp", ()),
    "cpp-locks-atomics-deadlock#0": ("spinlock.cpp", ()),
    "cpp-thread-safe-singleton#0": ("singletons.cpp", ("-DSINGLETON=Registry",)),
    "gpu-index-overflow-and-ceil-div#1": ("ceil_div.cpp", ()),
}
SANITIZE = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g")
# Part of every cache key: the checker's own source, so a change to its flags checks again.
_CHECKER_SOURCE = Path(__file__).read_bytes() + RUNNER.read_bytes()


@dataclass(frozen=True, slots=True)
class Outcome:
    """What checking one block gave: ok, and the tool's output when it was not."""

    ok: bool
    output: str = ""
    cached: bool = False


@cache
def tool_version(tool: str) -> str:
    """The version text a compiler or interpreter prints: part of every cache key."""
    if tool == "python":
        import numpy
        import torch

        return f"{sys.version} numpy {numpy.__version__} torch {torch.__version__}"
    try:
        done = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "missing"
    return done.stdout + done.stderr


def tool_missing(lang: str) -> str | None:
    """Why blocks of `lang` cannot be checked here, or None when they can."""
    tool = TOOLS[lang]
    if tool != "python" and shutil.which(tool) is None:
        return f"{tool} is not installed"
    return None


def _run(command: Sequence[str], cwd: Path, timeout: int, stdin: str | None = None) -> Outcome:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
    try:
        done = subprocess.run(
            command, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=timeout, env=env
        )
    except subprocess.TimeoutExpired:
        return Outcome(False, f"{command[0]} ran past {timeout} s")
    return Outcome(done.returncode == 0, (done.stdout + done.stderr)[-4000:])


def has_main(code: str) -> bool:
    """A C, C++ or CUDA block with its own entry point."""
    return "int main(" in code


def cuda_arch(found: CodeBlock) -> str:
    """The architecture a CUDA block is compiled for: its tag, else what its instructions
    need (wgmma and setmaxnreg: sm_90a; tcgen05: sm_100a), else sm_90."""
    if found.arch:
        return found.arch
    if "tcgen05" in found.code:
        return "sm_100a"
    if "wgmma" in found.code or "setmaxnreg" in found.code:
        return "sm_90a"
    return "sm_90"


def _check_cuda(found: CodeBlock, work: Path) -> Outcome:
    """Compile (and link, with a `main`); nothing here runs it, as no GPU is assumed."""
    (work / "block.cu").write_text(found.code)
    includes = [arg for header in CUDA_HEADERS for arg in ("-include", header)]
    arch = cuda_arch(found)  # -arch=sm_90a would also emit plain compute_90 PTX
    gencode = f"arch={arch.replace('sm_', 'compute_')},code={arch}"
    command = ["nvcc", "-std=c++20", "-gencode", gencode, "-Werror=all-warnings"]
    command += ["-Xcompiler", "-Wall,-Wextra", *includes, "block.cu"]
    output = ["-o", "block"] if has_main(found.code) else ["-c", "-o", "block.o"]
    return _run([*command, *output], work, COMPILE_TIMEOUT_S)


def native_source(found: CodeBlock) -> tuple[str, tuple[str, ...]]:
    """The text compiled for a C or C++ block (with its harness, if any) and extra flags."""
    if found.label not in HARNESSES:
        return found.code, ()
    name, flags = HARNESSES[found.label]
    harness = (HARNESS_DIR / name).read_text()
    return f'{found.code}\n#line 1 "{name}"\n{harness}', (*flags, *SANITIZE)


def _check_native(found: CodeBlock, work: Path) -> Outcome:
    """Compile with warnings as errors; build and run a block that has a `main`."""
    if found.lang == "cpp":
        source = work / "block.cpp"
        command = ["g++", "-std=c++20", "-include", "bits/stdc++.h"]
    else:
        source = work / "block.c"
        command = ["gcc", "-std=c17", *(f"-include{header}" for header in C_HEADERS)]
    code, flags = native_source(found)
    source.write_text(code)
    command += ["-Wall", "-Wextra", "-Werror", "-pthread", *flags, str(source)]
    if not has_main(code):
        return _run([*command, "-fsyntax-only"], work, COMPILE_TIMEOUT_S)
    built = _run([*command, "-O1", "-o", "block", "-lm"], work, COMPILE_TIMEOUT_S)
    if not built.ok:
        return built
    return _run([str(work / "block")], work, RUN_TIMEOUT_S)


def _check_shell(found: CodeBlock, work: Path) -> Outcome:
    return _run(["bash", "-n"], work, 30, stdin=found.code)


_CHECKERS: dict[str, Callable[[CodeBlock, Path], Outcome]] = {
    "cpp": _check_native,
    "c": _check_native,
    "cuda": _check_cuda,
    "bash": _check_shell,
}


def _key(item: CodeBlock) -> str:
    code, flags = native_source(item) if item.lang in ("c", "cpp") else (item.code, ())
    text = "\0".join([item.lang, cuda_arch(item), tool_version(TOOLS[item.lang]), code, *flags])
    return hashlib.sha256(_CHECKER_SOURCE + text.encode()).hexdigest()[:32]


def _python_batch(items: Sequence[CodeBlock]) -> list[Outcome]:
    """Run Python blocks through the forking runner: one interpreter start for all."""
    jobs = [{"label": i.label, "source": python_prelude(i.code) + "\n" + i.code} for i in items]
    with tempfile.TemporaryDirectory(prefix="bank-code-") as work:
        report = Path(work) / "results.json"
        runner = [sys.executable, "-I", str(RUNNER), str(report), str(PY_TIMEOUT_S)]
        timeout = PY_TIMEOUT_S * (len(items) + 1)
        done = _run(runner, Path(work), timeout, stdin=json.dumps(jobs))
        try:
            results = json.loads(report.read_text())
        except (OSError, json.JSONDecodeError):
            return [Outcome(False, f"runner failed: {done.output}") for _ in items]
    return [Outcome(*results[i.label]) for i in items]


def _check_one(item: CodeBlock, work: Path) -> list[Outcome]:
    work.mkdir(parents=True, exist_ok=True)
    try:
        return [_CHECKERS[item.lang](item, work)]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_all(found: Sequence[CodeBlock], cache_dir: Path) -> dict[str, Outcome]:
    """Check every block (`label` -> outcome), WORKERS at a time; a block that passed
    before with the same text, arch and tool version is not checked again."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    for lang in {item.lang for item in found}:
        tool_version(TOOLS[lang])  # once, before the threads need it
    keys = {item.label: _key(item) for item in found}
    outcomes = {
        item.label: Outcome(True, cached=True)
        for item in found
        if (cache_dir / f"{keys[item.label]}.ok").exists()
    }
    pending = [item for item in found if item.label not in outcomes]
    python = [item for item in pending if item.lang == "python"]
    native = [item for item in pending if item.lang != "python"]
    batches = [python[i::WORKERS] for i in range(WORKERS) if python[i::WORKERS]]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        runs = [(batch, pool.submit(_python_batch, batch)) for batch in batches]
        for item in native:
            work = cache_dir / f"work-{keys[item.label]}"
            runs.append(([item], pool.submit(_check_one, item, work)))
        for items, future in runs:
            for item, outcome in zip(items, future.result(), strict=True):
                outcomes[item.label] = outcome
                if outcome.ok:
                    (cache_dir / f"{keys[item.label]}.ok").touch()
    return outcomes
