"""Start a grader command under :mod:`quizzer.exercises.supervisor` and collect what it says.

The runner's side of a run: a fresh key and run token, the pipes (key, results, life,
output), two reader threads that keep memory bounded, the timeout, and the clean-up that
leaves no process of the run behind, whether the run ends, times out, or this process is
interrupted.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from quizzer.exercises.channel import KEY_BYTES, Receiver
from quizzer.exercises.output import OutputTail
from quizzer.exercises.supervisor import TOKEN_ENV, kill_marked

SUPERVISOR = Path(__file__).resolve().with_name("supervisor.py")
FILE_SIZE_LIMIT = 64 << 20  # bytes any one file the grader writes may reach
_BACKSTOP_S = 30.0  # the supervisor's own limit beyond the runner's, should the runner hang
_GRACE_S = 10.0


@dataclass
class Outcome:
    """What one supervised run left: exit status, timing, output tail and verified events."""

    returncode: int | None  # None after a timeout
    timed_out: bool
    duration: float
    output: OutputTail
    results: Receiver


def resource_limits(limit: float) -> dict[str, int]:
    """Limits for the grader process and everything it starts.

    CPU time: the wall-clock limit times the number of cores, plus a margin, so it never
    fires before the timeout even when every core is busy (torch uses them all); it bounds
    a process that escaped everything else. File size: 64 MB per file. The address space is
    limited by the plugin once it knows the run is CPU-only (CUDA reserves far more virtual
    memory than any host has, so a limit would break it).
    """
    cpus = os.cpu_count() or 1
    return {
        "RLIMIT_CPU": math.ceil((limit + 10) * cpus),
        "RLIMIT_FSIZE": FILE_SIZE_LIMIT,
    }


def run(command: list[str], limit: float, cwd: Path, env: dict[str, str]) -> Outcome:
    """Run ``command`` (a pytest command line using the quizzer plugin) supervised."""
    key = secrets.token_bytes(KEY_BYTES)
    token = secrets.token_hex(16)
    life_r, life_w = os.pipe()
    key_r, key_w = os.pipe()
    res_r, res_w = os.pipe()
    os.write(key_w, key)
    os.close(key_w)
    full = [*command, "--quizzer-key-fd", str(key_r), "--quizzer-results-fd", str(res_w)]
    config = {
        "life": life_r,
        "close": [key_r, res_w],
        "backstop": limit + _BACKSTOP_S,
        "limits": resource_limits(limit),
    }
    output, results = OutputTail(), Receiver(key)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", str(SUPERVISOR), json.dumps(config), "--", *full],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            env={**env, TOKEN_ENV: token},
            pass_fds=(life_r, key_r, res_w),
            start_new_session=True,
        )
    except BaseException:
        for fd in (life_w, res_r):
            os.close(fd)
        raise
    finally:
        for fd in (life_r, key_r, res_w):
            os.close(fd)
    assert proc.stdout is not None  # stdout=PIPE
    readers = [
        threading.Thread(target=output.drain, args=(proc.stdout,), daemon=True),
        threading.Thread(target=results.drain, args=(res_r,), daemon=True),
    ]
    for reader in readers:
        reader.start()
    timed_out = False
    try:
        proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        duration = round(time.monotonic() - start, 3)
        _clean_up(proc, life_w, token, readers)
    return Outcome(None if timed_out else proc.returncode, timed_out, duration, output, results)


def _clean_up(
    proc: subprocess.Popen[bytes], life_w: int, token: str, readers: list[threading.Thread]
) -> None:
    """Tell the supervisor to stop (closing the life pipe), then make sure of it."""
    os.close(life_w)
    try:
        proc.wait(timeout=_GRACE_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    kill_marked(token)  # anything that escaped the supervisor too
    for reader in readers:
        reader.join(timeout=_GRACE_S)
    if not readers[0].is_alive() and proc.stdout is not None:
        proc.stdout.close()
