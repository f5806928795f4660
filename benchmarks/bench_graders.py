"""Grade every exercise's reference solution on this machine and print the times.

Two times per exercise and track: the grader alone (``grade()`` in this process), and the
time to a verdict as a user gets it: a ``quizzer exercise NAME --check`` process, from its
start to its exit, on the reference copied into a temporary workspace (median of 3 runs).
Targets on a 2-core CPU machine: all references together, grader only, in at most 8 minutes;
a median time to verdict of at most 5 s over the tracks graded in one process (all but the
exercises that start a group of ranks).
Run: python benchmarks/bench_graders.py [--device cpu] [--runs 3]
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

from quizzer.exercises import Exercise, grade, load_catalog

# graders that start a process group of ranks (gloo over 127.0.0.1): seconds of start-up
MULTI_PROCESS = {"ring-allreduce", "tp-linear"}
# appended to the copy so that it is graded, not recognised as the shipped reference
_MARKER = {".py": "\n_BENCHMARK_COPY = True\n", ".cu": "\nstatic const int bench_copy_ = 0;\n"}


def _workspace_copy(exercise: Exercise, track: str, root: Path) -> Path:
    source = exercise.solution_file(track)
    target = root / exercise.name / source.name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(source.read_text(encoding="utf-8") + _MARKER.get(source.suffix, ""))
    return target


def time_to_verdict(exercise: Exercise, track: str, device: str, runs: int) -> tuple[float, int]:
    """Median seconds of ``quizzer exercise NAME --check`` from process start to its exit,
    and the exit code of the last run."""
    with tempfile.TemporaryDirectory(prefix="quizzer-bench-") as tmp:
        root = Path(tmp)
        _workspace_copy(exercise, track, root / "ws")
        env = {**os.environ, "QUIZZER_HOME": str(root / "home")}
        env.pop("QUIZZER_DB", None)
        command = [
            sys.executable,
            "-m",
            "quizzer",
            "exercise",
            exercise.name,
            "--track",
            track,
            "--dir",
            str(root / "ws"),
            "--device",
            device,
            "--check",
        ]
        times, code = [], 0
        for _ in range(runs):
            start = time.perf_counter()
            done = subprocess.run(command, env=env, capture_output=True, check=False)
            times.append(time.perf_counter() - start)
            code = done.returncode
    return statistics.median(times), code


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--runs", type=int, default=3, help="--check runs per track (median)")
    args = parser.parse_args()
    total = checks = 0.0
    failures = []
    single: list[float] = []
    print(f"{'exercise':16} {'track':8} {'verdict':12} {'grader':>8} {'--check':>8}  device")
    for exercise in load_catalog().ready():
        for track in exercise.meta.tracks:
            start = time.perf_counter()
            result = grade(exercise, exercise.solution_file(track.name), args.device, track.name)
            elapsed = time.perf_counter() - start
            total += elapsed
            verdict_s, code = time_to_verdict(exercise, track.name, args.device, args.runs)
            checks += verdict_s
            if exercise.name not in MULTI_PROCESS:
                single.append(verdict_s)
            if not result.passed:
                failures.append(f"{exercise.name}/{track.name}: {result.message}")
            if code != 0:
                failures.append(f"{exercise.name}/{track.name}: --check exited with {code}")
            print(
                f"{exercise.name:16} {track.name:8} {result.verdict:12} {elapsed:6.1f} s "
                f"{verdict_s:6.1f} s  {result.device}  {result.message}"
            )
            for metric in result.metrics:
                print(f"{'':26}{metric.name} = {metric.value:.4g} {metric.unit}")
    print(f"total {total:.1f} s grader only   target <= 480 s on a 2-core CPU machine")
    print(f"total {checks:.1f} s to a verdict with --check (median of {args.runs} each)")
    if single:
        print(
            f"median time to verdict over the {len(single)} single-process tracks: "
            f"{statistics.median(single):.1f} s   target <= 5 s"
        )
    if failures:
        raise SystemExit("reference failures:\n" + "\n".join(failures))


if __name__ == "__main__":
    main()
