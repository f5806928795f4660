"""Parent side: start W ranks, collect their case records, kill a group that stops progressing.

Ranks come from a forkserver that has imported torch once (a rank then starts in ~0.1 s
instead of several seconds), or from spawn where forkserver does not exist.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import queue as queue_mod
import re
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _ring_rank

OP_TIMEOUT_S = 10.0  # process-group timeout: a blocked send/recv raises after this
STALL_S = OP_TIMEOUT_S + 15.0  # no news from any rank for this long: kill the group
_CONTEXT: Any = None


def context() -> Any:
    global _CONTEXT
    if _CONTEXT is None:
        if sys.platform != "win32" and "forkserver" in mp.get_all_start_methods():
            _CONTEXT = mp.get_context("forkserver")
            _CONTEXT.set_forkserver_preload(["torch", "torch.distributed", "_ring_rank"])
        else:
            _CONTEXT = mp.get_context("spawn")
    return _CONTEXT


def warm_up() -> None:
    """Start the forkserver now: its torch import overlaps with the grader's own."""
    if context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


def cases_for(world: int) -> list[dict[str, Any]]:
    """n in {0, 1, W-1, W, W+1, 1000, 100003, 1M} in fp32, then fp64, int64 (with values
    near 2**62 / W whose sum is exact only in integers), 2-D, transposed and strided views;
    at W=4 the last cases run on the sub-group _ring_rank.SUB_GROUP only."""
    sizes = sorted({0, 1, world - 1, world, world + 1, 1000, 100003, 1_000_000})
    cases: list[dict[str, Any]] = [{"shape": [n], "dtype": "float32"} for n in sizes]
    cases += [{"shape": [n], "dtype": "float64"} for n in (world + 1, 100003)]
    cases.append({"shape": [world + 1], "dtype": "int64"})
    cases.append({"shape": [1000], "dtype": "int64", "big": True})
    cases.append({"shape": [world + 1, 7], "dtype": "float32"})
    cases.append({"shape": [world + 1, 7], "dtype": "float32", "layout": "transposed"})
    cases.append({"shape": [1001], "dtype": "float32", "layout": "strided"})
    if world > max(_ring_rank.SUB_GROUP):
        members = _ring_rank.SUB_GROUP
        cases += [{"shape": [n], "dtype": "float32", "members": members} for n in (1, 1001)]
    for seed, case in enumerate(cases):
        case["seed"] = seed
        case["world"] = world
    return cases


def describe(case: dict[str, Any]) -> str:
    """The case in words: its size, dtype, layout and sub-group."""
    shape = case["shape"]
    size = f"n={shape[0]}" if len(shape) == 1 else "shape=" + "x".join(map(str, shape))
    text = f"{size} {case['dtype']}"
    if case.get("big"):
        text += " near 2^62/W"
    if case.get("layout"):
        text += f" ({case['layout']} view)"
    if case.get("members"):
        text += f" on group=new_group({case['members']})"
    return text


def group_size(case: dict[str, Any]) -> int:
    """How many ranks take part in the case."""
    return len(case.get("members") or range(case["world"]))


@dataclass
class GroupRun:
    world: int
    backend: str
    cases: list[dict[str, Any]]
    records: list[dict[int, dict[str, Any]]] = field(default_factory=list)
    fatal: dict[int, str] = field(default_factory=dict)
    stalled: str | None = None  # why the parent killed the group
    seconds: float = 0.0
    logs: str = ""  # folder of the ranks' stderr files while the group runs

    def stop_reason(self) -> str | None:
        """Why the group did not run every case, in one line (None if it did)."""
        if self.fatal:
            rank, message = sorted(self.fatal.items())[0]
            return f"rank {rank}: {message}"
        return self.stalled

    def complete(self, index: int) -> bool:
        return len(self.records[index]) == self.world


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_group(world: int, solution: str, backend: str = "gloo") -> GroupRun:
    ctx = context()
    cases = cases_for(world)
    run = GroupRun(world, backend, cases, records=[{} for _ in cases])
    results = ctx.Queue()
    logs = tempfile.TemporaryDirectory(prefix="ring-ranks-")
    run.logs = logs.name
    args = (world, _free_port(), backend, solution, cases, OP_TIMEOUT_S, results)
    procs = [
        ctx.Process(target=_ring_rank.rank_main, args=(r, *args, _stderr_path(logs.name, r)))
        for r in range(world)
    ]
    start = time.monotonic()
    for proc in procs:
        proc.start()
    done: set[int] = set()
    last_news = time.monotonic()
    while len(done) < world:
        try:
            message = results.get(timeout=0.5)
        except queue_mod.Empty:
            dead = [r for r, p in enumerate(procs) if not p.is_alive() and r not in done]
            if dead and time.monotonic() - last_news > 2.0:
                for rank in dead:
                    run.fatal.setdefault(rank, _death(run, rank, procs[rank].exitcode))
                    done.add(rank)
            elif time.monotonic() - last_news > STALL_S:
                run.stalled = _stall_message(run, world, done)
                break
            continue
        last_news = time.monotonic()
        kind, rank = message[0], message[1]
        if kind == "case":
            run.records[message[2]][rank] = message[3]
        elif kind == "fatal":
            run.fatal[rank] = message[2]
            done.add(rank)
        else:
            done.add(rank)
    for proc in procs:
        proc.join(timeout=2)
        if proc.is_alive():
            proc.kill()
            proc.join()
    results.close()
    logs.cleanup()
    run.seconds = time.monotonic() - start
    return run


def _stderr_path(folder: str, rank: int) -> str:
    return str(Path(folder) / f"rank{rank}.err")


def _native_error(path: str) -> str:
    """The native error a dying rank printed last (gloo's "what(): ..." line), or ""."""
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    lines = [line.strip() for line in lines if line.strip()]
    picked = [line for line in lines if "what():" in line] or lines[-1:]
    if not picked:
        return ""
    text = picked[-1].split("what():", 1)[-1].strip()
    return re.sub(r"\[[^\]]*\.(cc|cpp|h):\d+\] ", "", text)[:300]


def _death(run: GroupRun, rank: int, code: int | None) -> str:
    """Why a rank died, with the case it was running and its last native error line."""
    how = f"the process exited with code {code} before finishing"
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            how = f"the process died ({signal.Signals(-code).name})"
    index = next((i for i, recs in enumerate(run.records) if rank not in recs), None)
    if index is not None:
        how += f" during {describe(run.cases[index])}"
    native = _native_error(_stderr_path(run.logs, rank))
    if native:
        how += f": {native}"
    if "data size" in native:
        how += f"; hint: {_ring_rank.SIZE_HINT}"
    if index is not None and run.cases[index].get("members"):
        how += f"; {_ring_rank.GROUP_HINT}"
    return how


def _stall_message(run: GroupRun, world: int, done: set[int]) -> str:
    stuck = [r for r in range(world) if r not in done]
    index = next((i for i in range(len(run.cases)) if not run.complete(i)), len(run.cases) - 1)
    case = run.cases[index]
    hint = _ring_rank.GROUP_HINT if case.get("members") else _ring_rank.DEADLOCK_HINT
    return (
        f"ranks {stuck} made no progress for {STALL_S:.0f} s at {describe(case)} "
        f"(an infinite loop, or a deadlock: {hint})"
    )
