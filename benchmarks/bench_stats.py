"""Time `quizzer stats` in a fresh interpreter against bare imports of what it must load.

The baseline imports SQLAlchemy, PyYAML and Rich's console and table, and exits: no
command can print stats faster than its libraries load. The quizzer run prints the
stats of a migrated database holding some history (an untimed first run creates it and
warms the bank cache). Prints medians over interleaved runs and the ratio (target <= 1.3).

Run: python benchmarks/bench_stats.py [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASELINE = "import sqlalchemy, yaml, rich.console, rich.table"
SEED = """
import sys
from quizzer.bank.cache import load_bank_cached
from quizzer.db.engine import open_database
from quizzer.review.model import Rating
from quizzer.review.service import ReviewService

service = ReviewService(open_database(sys.argv[1]), load_bank_cached())
for n, qid in enumerate(service.queue()[:20]):
    service.rate(qid, Rating(1 + n % 4))
"""


def timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, QUIZZER_HOME=str(Path(tmp) / "home"))
        url = f"sqlite:///{Path(tmp) / 'stats.db'}"
        subprocess.run([sys.executable, "-c", SEED, url], check=True, env=env)
        stats = [sys.executable, "-m", "quizzer", "--db", url, "stats"]
        bare = [sys.executable, "-c", BASELINE]
        timed(stats, env)
        ours, base = [], []
        for _ in range(runs):
            base.append(timed(bare, env))
            ours.append(timed(stats, env))
    b, q = statistics.median(base) * 1000, statistics.median(ours) * 1000
    print(f"bare imports (sqlalchemy, yaml, rich): {b:.0f} ms")
    print(f"quizzer stats:                         {q:.0f} ms")
    print(f"ratio: {q / b:.2f} (target <= 1.3)")


if __name__ == "__main__":
    main()
