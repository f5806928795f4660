"""Meta-tests of cuda-gemm, end to end through the runner, for both tracks: the reference and
every alternative (solution/alternatives/, track by file extension) pass, the starter fails,
each mutant fails with a message naming the broken property, GPU-only mutants compile
cleanly on a CPU (and fail on a GPU). The grader's own helpers are checked directly.

On a CPU the numba track runs in the numba-cuda simulator (with the shared grader helpers'
race detector); the CUDA C++ track is compile-only and needs nvcc (skipped without)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from quizzer.exercises.catalog import Mutant
from quizzer.exercises.runner import grade

from . import meta_tracks
from .meta import CATALOG, explain

EXERCISE = CATALOG.get("cuda-gemm")
TRACKS = [t.name for t in EXERCISE.meta.tracks]

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("track", meta_tracks.track_params(EXERCISE))
def test_reference_passes(track: str) -> None:
    meta_tracks.check_reference(EXERCISE, track, min_passed=5)


@pytest.mark.parametrize("path", meta_tracks.alternative_params(EXERCISE))
def test_alternative_solution_passes(path: Path) -> None:
    meta_tracks.check_alternative(EXERCISE, path)


def test_alternatives_cover_both_tracks() -> None:
    tracks = meta_tracks.track_of_suffix(EXERCISE)
    assert {tracks.get(p.suffix) for p in meta_tracks.alternatives(EXERCISE)} == set(TRACKS)


@pytest.mark.parametrize("track", meta_tracks.track_params(EXERCISE))
def test_starter_fails_saying_not_implemented(track: str) -> None:
    result = grade(
        EXERCISE, EXERCISE.starter_file(track), device="cpu", track=track, extra_args=["-x"]
    )
    assert result.status == "failed", explain(result)
    assert any("not implemented" in t.message for t in result.failures), explain(result)


def test_every_mutant_file_is_listed() -> None:
    meta_tracks.check_mutants_listed(EXERCISE)


@pytest.mark.parametrize("mutant", meta_tracks.mutant_params(EXERCISE))
def test_mutant_fails_naming_the_property(mutant: Mutant) -> None:
    meta_tracks.check_mutant_fails(EXERCISE, mutant)


@pytest.mark.parametrize("path", meta_tracks.gpu_mutant_params(EXERCISE))
def test_gpu_only_mutant(path: Path) -> None:
    """Wrong in ways only a run shows (tail reads, missing edge blocks, stale tile slots)."""
    meta_tracks.check_gpu_only_mutant(EXERCISE, path)


def test_compare_names_each_failure_shape() -> None:
    compare = meta_tracks.grader_module(EXERCISE, "_compare")
    rng = np.random.default_rng(0)
    A = rng.integers(-3, 4, (12, 9)).astype(np.float32)
    B = rng.integers(-3, 4, (9, 20)).astype(np.float32)
    C = (A @ B).astype(np.float32)
    assert compare.problem(C, A, B, (8,), exact=True) is None
    floor = C.copy()
    floor[8:, :] = np.nan
    assert "ceil division" in compare.problem(floor, A, B, (8,))
    swapped = C.copy()
    swapped[:, 16:] = np.nan  # grid (ceil(M/8), ceil(N/8)) = (2, 3): columns < 16 written
    assert "swapped" in compare.problem(swapped, A, B, (8,))
    transposed = C.copy()
    transposed[:8, :8] = C[:8, :8].T
    assert "transposed" in compare.problem(transposed, A, B, (8,), exact=True)
    off = C.copy()
    off[3, 4] += 1.0
    assert "C[3, 4]" in compare.problem(off, A, B, (8,), exact=True)
    assert "several k-tiles" in compare.problem(off, A, B, (8,), exact=True)
    # float tolerance: an error of one ulp per term passes, a wrong element does not
    An = rng.standard_normal((5, 300)).astype(np.float32)
    Bn = rng.standard_normal((300, 4)).astype(np.float32)
    assert compare.problem((An @ Bn).astype(np.float32), An, Bn, (32,)) is None


def test_kloop_barrier_order() -> None:
    kloop = meta_tracks.grader_module(EXERCISE, "_kloop")
    import ptx_checks as kit  # from _cudakit, put on sys.path by grader_module

    def kernel(body: list[str]) -> object:
        lines = ["$L__BB0_1:", "\tld.global.f32 \t%f1, [%rd1];", *body, "\t@%p1 bra \t$L__BB0_1;"]
        return kit.Kernel("k", lines, [(0, len(lines) - 1)])

    good = kernel(
        [
            "\tst.shared.f32 [%r1], %f1;",
            "\tbar.sync 0;",
            "\tld.shared.f32 %f2, [%r2];",
            "\tbar.sync 0;",
        ]
    )
    one_barrier = kernel(
        ["\tst.shared.f32 [%r1], %f1;", "\tbar.sync 0;", "\tld.shared.f32 %f2, [%r2];"]
    )
    no_first = kernel(
        ["\tst.shared.f32 [%r1], %f1;", "\tld.shared.f32 %f2, [%r2];", "\tbar.sync 0;"]
    )
    assert kloop.k_loops(good) == [good.loops[0]]
    assert kloop.missing_barrier(good, good.loops[0]) is None
    assert kloop.missing_barrier(one_barrier, one_barrier.loops[0]) == "load-then-store"
    assert kloop.missing_barrier(no_first, no_first.loops[0]) == "store-then-load"


def test_reuse_audit_in_a_separate_simulator_process() -> None:
    """The route a GPU run takes for the data-reuse check (a fresh interpreter with the
    simulator on): the reference passes, the naive kernel is named."""
    audit = meta_tracks.grader_module(EXERCISE, "_audit")
    assert audit.reuse_problem_in_simulator(EXERCISE.solution_file("numba")) is None
    naive = EXERCISE.path / "solution" / "mutants" / "naive_global.py"
    assert "No data reuse" in (audit.reuse_problem_in_simulator(naive) or "")


def test_compare_names_both_grid_bugs_when_they_look_alike() -> None:
    """One row of 13 columns, tile 8: a swapped grid and a floor grid clamped with max(1, ...)
    leave the same columns 8..12 unwritten, so the message names both."""
    compare = meta_tracks.grader_module(EXERCISE, "_compare")
    A = np.ones((1, 3), np.float32)
    B = np.ones((3, 13), np.float32)
    got = (A @ B).astype(np.float32)
    got[:, 8:] = np.nan
    message = compare.problem(got, A, B, (8,))
    assert "x and y are swapped" in message and "ceil division" in message, message


def test_launch_problem_names_the_block_rule() -> None:
    audit = meta_tracks.grader_module(EXERCISE, "_audit")
    assert audit.launch_problem("call", [((2, 3, 1), (4, 4, 1))], 4) is None
    message = audit.launch_problem("call", [((2, 3, 1), (8, 8, 1))], 4)
    assert "kernel[grid, (tile, tile)]" in message and "(4, 4)" in message, message


EARLY_RETURN = """
__device__ void sync_all() { __syncthreads(); }
__global__ void k(const float* a, float* c, int n) {
    int row = blockIdx.y * 16 + threadIdx.y;
    bool inside = row < n;
    if (blockIdx.x >= n) return;          // uniform: fine
    if (!inside) return;                  // line 7: before the barriers
    __syncthreads();
    if (row == 0) { c[0] = a[0]; return; }  // line 9: before sync_all()
    sync_all();
    if (threadIdx.x > 3) return;          // after the last barrier: fine
    c[row] = a[row];
}
"""


def test_cu_source_finds_early_returns_before_a_barrier() -> None:
    cu_source = meta_tracks.grader_module(EXERCISE, "cu_source")
    found = cu_source.early_returns(EARLY_RETURN)
    assert [(f.line, f.statement, f.barrier, f.barrier_line) for f in found] == [
        (7, "if (!inside)", "__syncthreads", 8),
        (9, "if (row == 0)", "sync_all", 10),
    ]
    assert cu_source.divergent_barriers(EARLY_RETURN) == []
    assert cu_source.early_returns(EXERCISE.solution_file("cuda").read_text()) == []
