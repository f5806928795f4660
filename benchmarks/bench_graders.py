"""Grade every exercise's reference solution on this machine and print the times.

Target on a 2-core CPU machine: all references together in at most 4 minutes.
Run: python benchmarks/bench_graders.py [--device cpu]
"""

from __future__ import annotations

import argparse
import time

from quizzer.exercises import grade, load_catalog


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    args = parser.parse_args()
    total = 0.0
    failures = []
    for exercise in load_catalog().ready():
        for track in exercise.meta.tracks:
            start = time.perf_counter()
            result = grade(exercise, exercise.solution_file(track.name), args.device, track.name)
            elapsed = time.perf_counter() - start
            total += elapsed
            if not result.passed:
                failures.append(f"{exercise.name}/{track.name}: {result.message}")
            print(
                f"{exercise.name:16} {track.name:8} {result.status:8} {elapsed:6.1f} s  "
                f"{result.device}  {result.message}"
            )
            for metric in result.metrics:
                print(f"{'':26}{metric.name} = {metric.value:.4g} {metric.unit}")
    print(f"total {total:.1f} s   target <= 240 s on a 2-core CPU machine")
    if failures:
        raise SystemExit("reference failures:\n" + "\n".join(failures))


if __name__ == "__main__":
    main()
