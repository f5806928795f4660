"""Time from process start to the first card painted, against a bare Textual app.

Each run is a fresh interpreter, headless. The quizzer run opens `quizzer study` on an
existing, migrated database (an untimed first run creates it, like a first launch); it
stops once the first question is on screen. The baseline is a bare Textual app showing
one Markdown widget, stopped after its first paint. The clock stops when a run reports
its paint; the time to process exit (interpreter teardown included) is shown too.
The home run opens bare `quizzer` (the console script, database from $QUIZZER_DB) and stops once its tables hold the numbers. Prints
medians and the ratios (targets: study <= 1.3, home <= 1.2). It also times loading the bank from its
cache against parsing and validating every YAML file (the baseline), each in a fresh
interpreter.

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

HOME = """
import os, sys
from quizzer.cli.launch import run as console_script
from quizzer.tui.screens import home

original = home.HomeScreen.fill

def fill_and_stop(self, width=None):
    original(self, width)
    if self.overview is not None and self.filled_width:
        def done():
            print("PAINTED", flush=True)
            self.app.exit()
        self.call_after_refresh(done)

home.HomeScreen.fill = fill_and_stop
import textual.app
run = textual.app.App.run
textual.app.App.run = lambda self, **kw: run(self, headless=True)
os.environ["QUIZZER_DB"] = sys.argv[1]
sys.argv = ["quizzer"]  # bare `quizzer`, as a user starts it
console_script()
"""

BANK_LOAD = """
import sys, time
from quizzer.bank.cache import load_bank_cached
from quizzer.bank.loader import check_bank
load = load_bank_cached if sys.argv[1] == "cached" else lambda: check_bank()[0]
start = time.perf_counter()
bank = load()
print(f"{time.perf_counter() - start:.6f} {len(bank.questions)}")
"""


def bank_load_ms(kind: str, runs: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", BANK_LOAD, kind], capture_output=True, text=True, env=env
        )
        times.append(float(out.stdout.split()[0]) * 1000)
    return statistics.median(times)


def measure(code: str, *args: str, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(seconds to the first paint, seconds to process exit) of one fresh interpreter."""
    with tempfile.TemporaryFile("w+") as err:  # a file, so a chatty run never blocks
        start = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env={**(os.environ if env is None else env), "TERM": "xterm-256color"},
        )
        painted = None
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("PAINTED"):
                painted = time.perf_counter() - start
                break
        try:
            rest, _ = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            rest, _ = process.communicate()
        exited = time.perf_counter() - start
        if painted is None or process.returncode != 0:
            err.seek(0)
            raise SystemExit(f"run did not paint or failed:\n{rest[-2000:]}\n{err.read()[-2000:]}")
    return painted, exited


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp()
    db = f"sqlite:///{tmp}/startup.db"
    # Untimed first launches: create and migrate the database, and write the bytecode
    # cache an installed package has (even where PYTHONDONTWRITEBYTECODE is set).
    first = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    measure(BASELINE, env=first)
    # The first-run setup has been answered, as on any later launch.
    subprocess.run(
        [sys.executable, "-m", "quizzer", "--db", db, "config", "set", "companies", "none"],
        check=True,
        capture_output=True,
        env=first,
    )
    measure(QUIZZER, db, env=first)
    measure(HOME, db, env=first)
    bare, ours, homes = [], [], []
    for _ in range(args.runs):  # interleaved, so machine load affects all alike
        bare.append(measure(BASELINE))
        ours.append(measure(QUIZZER, db))
        homes.append(measure(HOME, db))
    b, q, h = (statistics.median(p for p, _ in runs) for runs in (bare, ours, homes))
    be, qe = (statistics.median(e for _, e in runs) for runs in (bare, ours))
    print(f"bare Textual app, first paint: {b * 1000:.0f} ms (median of {args.runs})")
    print(f"quizzer study, first card:     {q * 1000:.0f} ms (median of {args.runs})")
    print(f"quizzer home, numbers shown:   {h * 1000:.0f} ms (median of {args.runs})")
    print(f"to process exit: bare {be * 1000:.0f} ms, quizzer {qe * 1000:.0f} ms ({qe / be:.2f})")
    print(f"ratio study: {q / b:.2f}   target <= 1.3")
    print(f"ratio home:  {h / b:.2f}   target <= 1.2")
    env = {**os.environ, "QUIZZER_HOME": tempfile.mkdtemp()}
    bank_load_ms("cached", 1, env)  # writes the cache
    cached, parsed = bank_load_ms("cached", 5, env), bank_load_ms("parse", 3, env)
    print(
        f"bank load: from cache {cached:.0f} ms, parse and validate {parsed:.0f} ms"
        f"   ratio {cached / parsed:.2f}"
    )


if __name__ == "__main__":
    main()
