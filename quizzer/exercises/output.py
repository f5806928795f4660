"""What a grader run printed, made safe to show: a bounded tail and a terminal-control filter.

The user's code may print without limit and may print escape sequences (colours, cursor
moves, OSC titles or hyperlinks, terminal resets). The runner keeps only the last
:data:`KEEP_BYTES` of the output, counts what it dropped, and removes every control
sequence and control character except newline and tab before anything reaches a terminal.
"""

from __future__ import annotations

import re
from typing import BinaryIO

KEEP_BYTES = 256 * 1024
_CHUNK = 64 * 1024

_ESCAPES = re.compile(
    r"""
      \x1b\[[0-?]*[ -/]*[@-~]?            # CSI: colours, cursor moves, erase
    | \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?  # OSC: window title, hyperlinks, clipboard
    | \x1b[PX^_][^\x1b]*(?:\x1b\\)?       # DCS, SOS, PM, APC strings
    | \x1b[ -/]*[0-~]?                    # any other escape (e.g. ESC c, a full reset)
    | \x9b[0-?]*[ -/]*[@-~]?              # 8-bit CSI
    | [\x90\x9d\x98\x9e\x9f][^\x07\x9c]*(?:\x07|\x9c)?  # 8-bit string controls
    """,
    re.VERBOSE,
)
# C0 except tab and newline, DEL, C1, and the bidirectional overrides that reorder text
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """``text`` without terminal control sequences or control characters (newline, tab kept)."""
    text = text.replace("\r\n", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def human_size(count: int) -> str:
    """``count`` bytes as a short size: ``512 bytes``, ``12.3 kB``, ``48.0 MB``."""
    if count < 1000:
        return f"{count} bytes"
    if count < 1_000_000:
        return f"{count / 1000:.1f} kB"
    return f"{count / 1_000_000:.1f} MB"


class OutputTail:
    """The last ``keep`` bytes of a stream, fed chunk by chunk; memory stays below 2 x keep."""

    def __init__(self, keep: int = KEEP_BYTES) -> None:
        self.keep = keep
        self.total = 0
        self._buffer = bytearray()

    def feed(self, data: bytes) -> None:
        """Add ``data``; older bytes beyond the limit are dropped (and counted)."""
        self.total += len(data)
        self._buffer += data
        if len(self._buffer) > 2 * self.keep:
            del self._buffer[: -self.keep]

    def drain(self, stream: BinaryIO) -> None:
        """Read ``stream`` to its end (run in a thread: it blocks until the writers close)."""
        while True:
            try:
                data = stream.read1(_CHUNK) if hasattr(stream, "read1") else stream.read(_CHUNK)
            except (OSError, ValueError):  # closed under us after a kill
                return
            if not data:
                return
            self.feed(data)

    @property
    def dropped(self) -> int:
        """How many bytes were printed but not kept."""
        return self.total - min(self.total, self.keep)

    def text(self) -> str:
        """The kept tail, decoded and cleaned."""
        return clean(bytes(self._buffer[-self.keep :]).decode("utf-8", errors="replace"))

    def notice(self) -> str:
        """``output truncated: 48.0 MB dropped`` when something was dropped, else ``""``."""
        return f"output truncated: {human_size(self.dropped)} dropped" if self.dropped else ""
