"""Meta-tests of cuda-softmax, end to end through the runner, for both tracks: the reference
and every alternative (solution/alternatives/, track by file extension) pass, the starter
fails with "not implemented", each mutant fails with a message naming the broken property,
and the GPU-only mutants compile cleanly on a CPU (a GPU run must fail them). The grader's
own source and PTX checks are also tested directly.

On a CPU the numba track runs in the numba-cuda simulator (with the shared shuffle shim and
race detector); the CUDA C++ track is compile-only and needs nvcc (skipped without)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from quizzer.exercises.catalog import Mutant
from quizzer.exercises.runner import grade

from . import meta_tracks
from .meta import CATALOG, explain

EXERCISE = CATALOG.get("cuda-softmax")
TRACKS = [t.name for t in EXERCISE.meta.tracks]

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("track", meta_tracks.track_params(EXERCISE))
def test_reference_passes(track: str) -> None:
    meta_tracks.check_reference(EXERCISE, track, min_passed=9)


@pytest.mark.parametrize("path", meta_tracks.alternative_params(EXERCISE))
def test_alternative_solution_passes(path: Path) -> None:
    meta_tracks.check_alternative(EXERCISE, path)


def test_alternatives_cover_both_tracks() -> None:
    suffixes = meta_tracks.track_of_suffix(EXERCISE)
    tracks = [suffixes.get(p.suffix) for p in meta_tracks.alternatives(EXERCISE)]
    assert all(tracks.count(t) >= 2 for t in TRACKS), tracks


@pytest.mark.parametrize("track", meta_tracks.track_params(EXERCISE))
def test_starter_fails_not_implemented(track: str) -> None:
    starter = EXERCISE.starter_file(track)
    result = grade(EXERCISE, starter, device="cpu", track=track, extra_args=["-x"])
    assert result.status == "failed", explain(result)
    assert "not implemented" in result.failures[0].message, explain(result)


@pytest.mark.parametrize("path", meta_tracks.gpu_mutant_params(EXERCISE))
def test_gpu_only_mutant(path: Path) -> None:
    """Wrong in ways only a run shows: a CPU compiles them cleanly, a GPU must fail them."""
    meta_tracks.check_gpu_only_mutant(EXERCISE, path)


def test_every_mutant_file_is_listed() -> None:
    meta_tracks.check_mutants_listed(EXERCISE)


@pytest.mark.parametrize("mutant", meta_tracks.mutant_params(EXERCISE))
def test_mutant_fails_naming_the_property(mutant: Mutant) -> None:
    meta_tracks.check_mutant_fails(EXERCISE, mutant)


def test_exp_call_check_finds_exp_of_a_non_difference() -> None:
    checks = meta_tracks.grader_module(EXERCISE, "_cu_checks")
    source = """
    // expf(x) in a comment is ignored
    float a = __expf(v - m) + expf((s.m - top) * 1.5f) + exp2f(x[j] - mx);
    float b = expf(in[j]);
    float c = __expf(-v);
    """
    calls = checks.exp_calls(source)
    assert [(c.text, c.difference) for c in calls] == [
        ("__expf(v - m)", True),
        ("expf((s.m - top) * 1.5f)", True),
        ("exp2f(x[j] - mx)", True),
        ("expf(in[j])", False),
        ("__expf(-v)", False),
    ]
    assert calls[3].line == 4


def test_handoff_check_wants_a_barrier_between_store_and_load() -> None:
    checks = meta_tracks.grader_module(EXERCISE, "_cu_checks")
    import ptx_checks

    lines = [
        "\tst.shared.f32 \t[%r1], %f1;",
        "\tbar.sync \t0;",
        "\tld.shared.f32 \t%f2, [%r2];",
        "\tst.shared.f32 \t[%r3], %f3;",
        "\tld.shared.f32 \t%f4, [%r4];",
    ]
    found = checks.unsynchronised_handoffs(ptx_checks.Kernel("k", lines))
    assert found == ["ld.shared.f32 %f4, [%r4];"]


def test_row_diagnosis_tells_the_two_normaliser_bugs_apart() -> None:
    rows = meta_tracks.grader_module(EXERCISE, "_rows")
    x = rows.random_rows(1, 50, seed=1)
    ref = rows.reference(x)
    for factor, words in ((0.5, "must be rescaled to the new max"), (1.5, "misses part of")):
        with pytest.raises(AssertionError, match=words):
            rows.check(x, (ref * factor).astype("float32"), "call", threads=32)
    rows.check(x, ref.astype("float32"), "call", threads=32)  # the right answer passes


def test_overflow_advice_follows_the_exp_that_overflowed() -> None:
    """exp(x) advice only for an exp of a raw value; an exp of a difference that overflows
    means the max subtracted is not the whole row's."""
    rows = meta_tracks.grader_module(EXERCISE, "_rows")
    assert rows._exps_of_differences("y[r, j] = math.exp(v - M) / D")
    assert rows._exps_of_differences("d = d * math.exp(m - m_new) + math.exp(x[r, j] - m_new)")
    assert not rows._exps_of_differences("s += math.exp(x[row, j])")
    assert not rows._exps_of_differences("d = d * math.exp(m - m_new) + math.exp(-v)")
    assert not rows._exps_of_differences("no call here")


def test_an_all_zero_row_names_the_nan_merge() -> None:
    rows = meta_tracks.grader_module(EXERCISE, "_rows")
    x = rows.random_rows(1, 8, seed=2)
    with pytest.raises(AssertionError, match=r"exp\(-inf - \(-inf\)\) = exp\(NaN\)"):
        rows.check(x, np.zeros_like(x), "call", threads=32)
