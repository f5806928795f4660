"""Run Python blocks, each in its own forked process with a time limit.

Reads a JSON list of {"label", "source"} from stdin, imports numpy and torch once, then
forks a child per block so every block starts from the same clean interpreter state
without paying for the imports again. Writes one JSON object, label -> [ok, output], to
the file named by its first argument (stdout is left to whatever the blocks print); the
second argument is each block's time limit in seconds.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sys
import tempfile
import traceback


def _child(source: str, label: str, log: str, timeout_s: int) -> None:
    signal.alarm(timeout_s)  # the default action ends the child
    with open(log, "w") as out:
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), line_buffering=True)
        sys.stderr = sys.stdout
        try:
            import torch

            torch.set_num_threads(1)
            exec(compile(source, f"<{label}>", "exec"), {"__name__": "__main__"})
        except BaseException:  # any failure of the block is its result
            traceback.print_exc()
            sys.stdout.flush()
            os._exit(1)
        sys.stdout.flush()
    os._exit(0)


def run_one(source: str, label: str, timeout_s: int) -> tuple[bool, str]:
    """Fork, run `source` in the child, and report whether it exited cleanly."""
    with tempfile.NamedTemporaryFile("r", suffix=".log", delete=False) as handle:
        log = handle.name
    try:
        pid = os.fork()
        if pid == 0:
            _child(source, label, log, timeout_s)
        _, status = os.waitpid(pid, 0)
        with open(log, errors="replace") as handle:
            output = handle.read()[-4000:]
    finally:
        os.unlink(log)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM:
        return False, output + f"\nran past {timeout_s} s"
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, output


def main() -> None:
    """Entry point: blocks on stdin, results on stdout."""
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    import numpy  # noqa: F401 - loaded once, shared by every child
    import torch  # noqa: F401

    jobs = json.load(sys.stdin)
    timeout_s = int(sys.argv[2])
    results = {job["label"]: run_one(job["source"], job["label"], timeout_s) for job in jobs}
    with open(sys.argv[1], "w") as out:
        json.dump(results, out)


if __name__ == "__main__":
    main()
