"""Supervise one grader run so that nothing it starts outlives it (standard library only).

The runner starts this file as a script (``python -I supervisor.py CONFIG -- COMMAND...``) in
a new session. The supervisor becomes a child subreaper on Linux (orphaned descendants, a
``setsid()`` grandchild included, are re-parented to it instead of to init), forks the grader
into its own process group with ``PR_SET_PDEATHSIG`` (the grader dies with the supervisor)
and its resource limits, then waits for whichever comes first:

* the grader exits: its exit status is passed on as the supervisor's own;
* the runner goes away or gives up (timeout, Ctrl-C, killed): the "life" pipe, whose write
  end only the runner holds, reads end-of-file;
* a backstop time limit, should the runner hang.

Every way out kills the grader's process group, every re-parented descendant and every
process whose environment carries this run's ``QUIZZER_RUN_TOKEN``, until none is left.
The runner calls :func:`kill_marked` once more at the end, for what escaped all of these.

Residual risk, accepted: user code that starts a process in a new session with an emptied
environment and then kills the supervisor leaves nothing to find that process by (on Linux
without cgroups); a busy one is still ended by the CPU time limit it inherits, a sleeping
one is not.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import time
from collections.abc import Iterator

TOKEN_ENV = "QUIZZER_RUN_TOKEN"
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PROC = "/proc"


def prctl(option: int, value: int) -> bool:
    """``prctl(option, value)`` through libc on Linux; False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _processes() -> Iterator[tuple[int, int]]:
    """``(pid, ppid)`` of every live process visible in /proc (none elsewhere)."""
    try:
        names = os.listdir(_PROC)
    except OSError:
        return
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"{_PROC}/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields and fields[0] not in (b"Z", b"X"):  # zombies are dead already
            yield int(name), int(fields[1])


def _marked(pid: int, marker: bytes) -> bool:
    try:
        with open(f"{_PROC}/{pid}/environ", "rb") as env:
            return marker in b"\0" + env.read()
    except OSError:
        return False


def targets(token: str, parent: int | None = None) -> set[int]:
    """Live processes carrying ``token`` in their environment, or whose parent is ``parent``."""
    marker = f"\0{TOKEN_ENV}={token}\0".encode()
    me = os.getpid()
    found = set()
    for pid, ppid in _processes():
        if pid != me and ((parent is not None and ppid == parent) or _marked(pid, marker)):
            found.add(pid)
    return found


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def kill_marked(
    token: str, group: int | None = None, children: bool = False, timeout: float = 5.0
) -> None:
    """SIGKILL ``group``, every process marked with ``token`` and, with ``children``, every
    child of this process (a subreaper's re-parented orphans), reaping them.

    Repeats until nothing is left (a dying process may have forked), at most ``timeout`` s.
    """
    end = time.monotonic() + timeout
    while True:
        alive = False
        if group is not None and hasattr(os, "killpg"):
            try:
                os.killpg(group, signal.SIGKILL)
                alive = True
            except (ProcessLookupError, PermissionError):
                pass
        victims = targets(token, os.getpid() if children else None)
        for pid in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if children:
            _reap()
        if not (victims or alive) or time.monotonic() > end:
            return
        time.sleep(0.01)


def _limit(resource: object, name: str, value: int) -> None:
    kind = getattr(resource, name)
    _, hard = resource.getrlimit(kind)  # type: ignore[attr-defined]
    if hard != resource.RLIM_INFINITY:  # type: ignore[attr-defined]
        value = min(value, hard)
    extra = 5 if name == "RLIMIT_CPU" else 0  # SIGXCPU at soft, SIGKILL 5 s later
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(kind, (value, value + extra))  # type: ignore[attr-defined]


def _child(command: list[str], life: int, limits: dict[str, int], supervisor: int) -> None:
    """In the forked child: own process group, die with the supervisor, limits, exec."""
    try:
        os.setpgid(0, 0)
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != supervisor:  # the supervisor died before prctl took effect
            os._exit(70)
        os.close(life)
        import resource

        for name, value in limits.items():
            _limit(resource, name, int(value))
        os.execv(command[0], command)
    except BaseException as exc:  # nothing may escape a forked child
        with contextlib.suppress(OSError):
            os.write(2, f"cannot start the grader: {exc}\n".encode())
    os._exit(127)


def _wait(pid: int, life: int, backstop: float) -> int | None:
    """The grader's wait status, or None when the runner went away or the backstop passed."""
    pidfd = None
    if hasattr(os, "pidfd_open"):
        with contextlib.suppress(OSError):
            pidfd = os.pidfd_open(pid)
    end = time.monotonic() + backstop
    try:
        while True:
            got, status = os.waitpid(pid, os.WNOHANG)
            if got == pid:
                return status
            remaining = end - time.monotonic()
            if remaining <= 0:
                return None
            watch = [life] if pidfd is None else [life, pidfd]
            step = remaining if pidfd is not None else min(remaining, 0.02)
            ready, _, _ = select.select(watch, [], [], step)
            if life in ready:  # nothing is ever written: readable means the runner is gone
                return None
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _exit_like(status: int | None) -> None:
    if status is None:
        os._exit(125)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def _ignore_stops() -> None:
    """Once clean-up begins nothing may interrupt it (the runner's death sends SIGTERM just
    after its end of the life pipe closes)."""
    for sig in _STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def _stop(signum: int, frame: object) -> None:
    _ignore_stops()
    raise SystemExit(128 + signum)


def main(argv: list[str]) -> None:
    """``supervisor.py CONFIG -- COMMAND...``; CONFIG is JSON: life, close, backstop, limits."""
    config = json.loads(argv[1])
    command = argv[argv.index("--") + 1 :]
    token = os.environ.get(TOKEN_ENV, "")
    life = int(config["life"])
    for sig in _STOP_SIGNALS:
        signal.signal(sig, _stop)
    prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    prctl(_PR_SET_CHILD_SUBREAPER, 1)
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core files from a crash
    me = os.getpid()
    pid = os.fork()
    if pid == 0:
        _child(command, life, config.get("limits", {}), me)
    for fd in config.get("close", []):  # the grader's ends: EOF must come when it is gone
        with contextlib.suppress(OSError):
            os.close(int(fd))
    status = None
    try:
        status = _wait(pid, life, float(config["backstop"]))
    finally:
        _ignore_stops()
        kill_marked(token, group=pid, children=True)
    _exit_like(status)


if __name__ == "__main__":
    main(sys.argv)
