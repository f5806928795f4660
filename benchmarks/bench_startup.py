"""Time from process start to the first card painted, against a bare Textual app.

Each run is a fresh interpreter, headless. The quizzer run opens `quizzer study` on a
fresh database; it stops once the first question is on screen. The baseline is a bare
Textual app showing one Markdown widget, stopped after its first paint. Prints medians
and the ratio (target <= 1.3).

Run: python benchmarks/bench_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

BASELINE = """
from textual.app import App
from textual.widgets import Markdown

class Bare(App):
    def compose(self):
        yield Markdown("# A question\\n\\nWhat does the first card say?")
    def on_mount(self):
        self.call_after_refresh(self.done)
    def done(self):
        print("PAINTED", flush=True)
        self.exit()

Bare().run(headless=True)
"""

QUIZZER = """
import sys
from quizzer.cli.main import entry
from quizzer.tui.screens import study

original = study.StudyScreen.show_current

def show_and_stop(self):
    original(self)
    if self.session.current is not None:
        def done():
            print("PAINTED", flush=True)
            self.app.exit()
        self.call_after_refresh(done)

study.StudyScreen.show_current = show_and_stop
import textual.app
run = textual.app.App.run
textual.app.App.run = lambda self, **kw: run(self, headless=True)
sys.exit(entry(["--db", sys.argv[1], "study"]))
"""


def measure(code: str, *args: str) -> float:
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TERM": "xterm-256color"},
    )
    elapsed = time.perf_counter() - start
    if "PAINTED" not in out.stdout:
        raise SystemExit(f"run did not paint:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp()
    db = f"sqlite:///{tmp}/startup.db"
    measure(QUIZZER, db)  # creates and migrates the database once, like a first launch
    bare, ours = [], []
    for _ in range(args.runs):  # interleaved, so machine load affects both alike
        bare.append(measure(BASELINE))
        ours.append(measure(QUIZZER, db))
    b, q = statistics.median(bare), statistics.median(ours)
    print(f"bare Textual app, first paint: {b * 1000:.0f} ms (median of {args.runs})")
    print(f"quizzer study, first card:     {q * 1000:.0f} ms (median of {args.runs})")
    print(f"ratio: {q / b:.2f}   target <= 1.3")


if __name__ == "__main__":
    main()
