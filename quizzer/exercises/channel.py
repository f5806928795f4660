"""Authenticated results from the grader process to the runner.

The runner creates two pipes before it starts the grader: a key pipe, into which it writes a
fresh random key and closes it, and a results pipe. The pytest plugin reads the key and closes
that pipe in ``pytest_configure``, before the user's module is imported, then sends every
event (test started, test finished, metric, ...) as one line on the results pipe:
``HMAC-SHA256(key, payload) payload``, each payload carrying a sequence number. The runner
accepts only lines whose MAC checks out and whose numbers follow one another, so a report
written by the user's code (to a file, to the inherited results descriptor, or replayed from
an earlier line) is detected rather than believed. The key never enters the environment or
the file system.

Residual risk, accepted: the user's code runs in the same interpreter as pytest, so it could
still dig the key out of the plugin's memory (e.g. through ``gc`` or the plugin's objects) or
patch pytest itself. That takes deliberate effort against this code; the channel exists so
that a forged report file, or lines written to the inherited descriptor, change nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
from collections.abc import Callable
from typing import Any

KEY_BYTES = 32
MAX_LINE = 1 << 20  # one event; longer is garbage
MAX_TOTAL = 32 << 20  # all events of one run
_MAC_HEX = 64


def read_key(fd: int) -> bytes:
    """Read the key from ``fd`` to its end and close it."""
    chunks = []
    try:
        while chunk := os.read(fd, 4096):
            chunks.append(chunk)
            if sum(map(len, chunks)) > 4 * KEY_BYTES:
                break
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return b"".join(chunks)


def _mac(key: bytes) -> Callable[[bytes], str]:
    def sign(payload: bytes) -> str:
        return hmac.new(key, payload, hashlib.sha256).hexdigest()

    return sign


class Sender:
    """Writes signed, numbered events to an inherited descriptor (the plugin's end)."""

    def __init__(self, fd: int, key: bytes) -> None:
        self._fd = fd
        self._sign = _mac(key)
        self._seq = 0

    def send(self, kind: str, **fields: Any) -> None:
        """Send one event; a runner that went away is ignored."""
        payload = json.dumps({"seq": self._seq, "kind": kind, **fields}, separators=(",", ":"))
        self._seq += 1
        data = payload.encode("ascii")
        line = self._sign(data).encode("ascii") + b" " + data + b"\n"
        with contextlib.suppress(OSError):
            while line:
                line = line[os.write(self._fd, line) :]


class Receiver:
    """Verifies lines from the results pipe (the runner's end); keeps the events in order.

    ``tampered`` says why the stream cannot be trusted: a bad MAC, a gap or repeat in the
    numbering, a line too long, too much data in all. Events after that point are dropped.
    """

    def __init__(self, key: bytes) -> None:
        self._sign = _mac(key)
        self._partial = bytearray()
        self._total = 0
        self.events: list[dict[str, Any]] = []
        self.tampered: str | None = None

    def feed(self, data: bytes) -> None:
        """Take the next chunk read from the pipe."""
        if self.tampered:
            return
        self._total += len(data)
        if self._total > MAX_TOTAL:
            self.tampered = "the grader sent more result data than any grader writes"
            return
        self._partial += data
        *lines, rest = bytes(self._partial).split(b"\n")
        self._partial = bytearray(rest)
        for line in lines:
            self._line(line)
        if len(self._partial) > MAX_LINE:
            self.tampered = "a result line was longer than any grader writes"

    def _line(self, line: bytes) -> None:
        if self.tampered:
            return
        mac, _, payload = line.partition(b" ")
        expected = self._sign(payload)
        if len(mac) != _MAC_HEX or not hmac.compare_digest(mac.decode("latin-1"), expected):
            self.tampered = "a result line did not come from the grader"
            return
        try:
            event = json.loads(payload)
        except ValueError:
            self.tampered = "a signed result line could not be read"
            return
        if not isinstance(event, dict) or event.get("seq") != len(self.events):
            self.tampered = "the grader's results arrived out of order"
            return
        self.events.append(event)

    def drain(self, fd: int) -> None:
        """Read ``fd`` to its end (run in a thread); closes it."""
        try:
            while data := os.read(fd, 65536):
                self.feed(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                os.close(fd)
