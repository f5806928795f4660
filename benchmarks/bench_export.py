"""Export of a synthetic bank of 10,000 questions to .apkg. Target: under 10 s on 2 cores.

Run: python benchmarks/bench_export.py [--questions 10000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import synthetic_bank

from quizzer.export.anki import export_apkg
from quizzer.export.notes import build_note


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=10_000)
    args = parser.parse_args()
    bank = synthetic_bank(args.questions)
    questions = list(bank.questions.values())
    start = time.perf_counter()
    for q in questions:  # baseline in the same run: rendering alone, no package
        build_note(bank, q)
    render = time.perf_counter() - start
    out = Path(tempfile.mkdtemp()) / "bench.apkg"
    start = time.perf_counter()
    summary = export_apkg(bank, questions, out)
    total = time.perf_counter() - start
    size = out.stat().st_size / 1e6
    print(f"rendering {summary.notes} notes alone: {render:.2f} s")
    print(
        f"export of {summary.notes} notes to .apkg: {total:.2f} s ({size:.1f} MB)   target < 10 s"
    )
    print(f"ratio export / rendering: {total / render:.2f}")


if __name__ == "__main__":
    main()
