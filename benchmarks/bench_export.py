"""Export of a synthetic bank of 10,000 questions to .apkg. Target: under 10 s on 2 cores.

Run: python benchmarks/bench_export.py [--questions 10000]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import synthetic_bank

from quizzer.export.anki import export_apkg
from quizzer.export.notes import build_note, default_workers, fork_is_safe


def _cpu_seconds() -> float:
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=None, help="default: one per CPU")
    args = parser.parse_args()
    bank = synthetic_bank(args.questions)
    questions = list(bank.questions.values())
    start = time.perf_counter()
    for q in questions:  # baseline in the same run: rendering alone, no package, one process
        build_note(bank, q)
    render = time.perf_counter() - start
    workers = args.workers if args.workers is not None else default_workers(len(questions))
    workers = workers if fork_is_safe() else 1
    out = Path(tempfile.mkdtemp()) / "bench.apkg"
    cpu = _cpu_seconds()
    start = time.perf_counter()
    summary = export_apkg(bank, questions, out, workers=workers)
    total = time.perf_counter() - start
    cpu = _cpu_seconds() - cpu
    size = out.stat().st_size / 1e6
    print(f"rendering {summary.notes} notes alone, in one process: {render:.2f} s")
    print(f"export renders in {workers} process(es) ({len(os.sched_getaffinity(0))} CPUs)")
    print(
        f"export of {summary.notes} notes to .apkg: {total:.2f} s ({size:.1f} MB)   target < 10 s"
    )
    print(f"ratio export / rendering: {total / render:.2f}")
    print(
        f"CPU time of the export, all processes: {cpu:.2f} s"
        " (a time well above CPU time / processes: other load held the CPUs)"
    )


if __name__ == "__main__":
    main()
