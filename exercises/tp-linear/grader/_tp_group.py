"""Parent side: start W gloo ranks on 127.0.0.1, collect their records, stop a stuck group.

Ranks come from a forkserver that has imported torch once (a rank then starts in a fraction
of a second), or from spawn where forkserver does not exist. This module does not import
torch itself.
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

import _tp_rank
from _tp_cases import cases_for, describe

OP_TIMEOUT_S = 8.0  # process-group timeout: a collective nobody joins raises after this
STALL_S = OP_TIMEOUT_S + 12.0  # no news from any rank for this long: kill the group
_CONTEXT: Any = None
# imported once in the forkserver, not in every rank: torch, the grader's rank code, the
# plugin that loads the solution, and what the first backward(grad) imports lazily (~1 s)
PRELOAD = [
    "torch",
    "torch.distributed",
    "torch.distributed.nn",
    "torch.distributed._functional_collectives",
    "torch.fx.experimental.symbolic_shapes",
    "quizzer.exercises.plugin",
    "_tp_rank",
]


def context() -> Any:
    """The multiprocessing context the ranks start from (forkserver preloading torch)."""
    global _CONTEXT
    if _CONTEXT is None:
        if sys.platform != "win32" and "forkserver" in mp.get_all_start_methods():
            _CONTEXT = mp.get_context("forkserver")
            _CONTEXT.set_forkserver_preload(PRELOAD)
        else:
            _CONTEXT = mp.get_context("spawn")
    return _CONTEXT


def warm_up() -> None:
    """Start the forkserver now, so its torch import overlaps with test collection."""
    if context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


@dataclass
class GroupRun:
    """What one process group of ``world`` ranks did over all the cases."""

    world: int
    cases: list[dict[str, Any]]
    records: list[dict[int, dict[str, Any]]] = field(default_factory=list)
    steps: dict[int, tuple[int, str]] = field(default_factory=dict)  # rank -> (case, step)
    fatal: dict[int, str] = field(default_factory=dict)
    stalled: str | None = None
    seconds: float = 0.0
    logs: str = ""

    def where(self, rank: int) -> str:
        """Where ``rank`` was last seen, in words."""
        if rank not in self.steps:
            return "before the first case"
        index, step = self.steps[rank]
        return f"in {step} of {describe(self.cases[index], rank)}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_group(world: int, solution: str) -> GroupRun:
    """Run every case of ``world`` in one group of ``world`` ranks."""
    ctx = context()
    cases = cases_for(world)
    run = GroupRun(world, cases, records=[{} for _ in cases])
    results = ctx.Queue()
    logs = tempfile.TemporaryDirectory(prefix="tp-ranks-")
    run.logs = logs.name
    args = (world, _free_port(), solution, cases, OP_TIMEOUT_S, results)
    procs = [
        ctx.Process(target=_tp_rank.rank_main, args=(r, *args, _stderr_path(logs.name, r)))
        for r in range(world)
    ]
    start = time.monotonic()
    for proc in procs:
        proc.start()
    _collect(run, procs, results)
    for proc in procs:
        proc.join(timeout=2)
        if proc.is_alive():
            proc.kill()
            proc.join()
    results.close()
    logs.cleanup()
    run.seconds = time.monotonic() - start
    return run


def _collect(run: GroupRun, procs: list[Any], results: Any) -> None:
    done: set[int] = set()
    last_news = time.monotonic()
    while len(done) < run.world:
        try:
            message = results.get(timeout=0.25)
        except queue_mod.Empty:
            dead = [r for r, p in enumerate(procs) if not p.is_alive() and r not in done]
            if dead and time.monotonic() - last_news > 1.5:
                for rank in dead:
                    run.fatal.setdefault(rank, _death(run, rank, procs[rank].exitcode))
                    done.add(rank)
            elif time.monotonic() - last_news > STALL_S:
                run.stalled = _stall_message(run, done)
                return
            continue
        last_news = time.monotonic()
        kind, rank = message[0], message[1]
        if kind == "step":
            run.steps[rank] = (message[2], message[3])
        elif kind == "case":
            run.records[message[2]][rank] = message[3]
        elif kind == "fatal":
            run.fatal[rank] = message[2]
            done.add(rank)
        else:
            done.add(rank)


def _stderr_path(folder: str, rank: int) -> str:
    return str(Path(folder) / f"rank{rank}.err")


def _native_error(path: str) -> str:
    """The last native error line a dying rank printed ("what(): ..."), or ""."""
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
    how = f"the process exited with code {code}"
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            how = f"the process died ({signal.Signals(-code).name})"
    how += f" {run.where(rank)}"
    native = _native_error(_stderr_path(run.logs, rank))
    return how + (f": {native}" if native else "")


def _stall_message(run: GroupRun, done: set[int]) -> str:
    stuck = [r for r in range(run.world) if r not in done]
    places = "; ".join(f"rank {r} {run.where(r)}" for r in stuck)
    return (
        f"ranks {stuck} made no progress for {STALL_S:.0f} s ({places}): an endless loop, "
        "or a collective that some rank of the group never calls"
    )
