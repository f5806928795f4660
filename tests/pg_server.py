"""Start and stop a throwaway PostgreSQL server on a loopback port, for the test suite.

Used two ways: ``.ci/run`` calls ``python tests/pg_server.py start DIR`` and exports the
URL it prints; the suite's conftest starts one itself when no URL is given and the server
binaries exist. The server refuses to run as root, so as root it runs as ``postgres``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)


def find_binary(name: str) -> str | None:
    """The path of a PostgreSQL server binary, or None when it is not installed."""
    for folder in BIN_DIRS:
        if (folder / name).exists():
            return str(folder / name)
    return shutil.which(name)


def _as_server_user(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    return ["runuser", "-u", "postgres", "--", *args]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(folder: Path) -> str:
    """Initialise a cluster in ``folder``, start it and return a SQLAlchemy URL for it."""
    initdb, pg_ctl = find_binary("initdb"), find_binary("pg_ctl")
    if not initdb or not pg_ctl:
        raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) not found")
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    data = folder / "data"
    run = lambda args: subprocess.run(  # noqa: E731
        _as_server_user(args), check=True, capture_output=True, text=True, cwd="/"
    )
    run([initdb, "-D", str(data), "-U", "quizzer", "--auth=trust", "-E", "UTF8"])
    port = _free_port()
    options = f"-p {port} -h 127.0.0.1 -k {folder} -c fsync=off -c full_page_writes=off"
    run([pg_ctl, "-D", str(data), "-l", str(folder / "log"), "-o", options, "-w", "start"])
    url = f"postgresql+psycopg://quizzer@127.0.0.1:{port}/postgres"
    _wait(port)
    return url


def _wait(port: int, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"PostgreSQL did not listen on port {port}")


def stop(folder: Path) -> None:
    """Stop the server started in ``folder`` (fast shutdown) and remove its files."""
    pg_ctl = find_binary("pg_ctl")
    if pg_ctl and (folder / "data").exists():
        subprocess.run(
            _as_server_user([pg_ctl, "-D", str(folder / "data"), "-m", "fast", "stop"]),
            capture_output=True,
            cwd="/",
        )
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    command, where = sys.argv[1], Path(sys.argv[2])
    if command == "start":
        print(start(where))
    else:
        stop(where)
