"""Grader for ring-allreduce: world sizes 1-4 over gloo (CPU), and NCCL on 2+ GPUs.

All cases of one world size run in ONE process group (see _ring_group.cases_for); each test
below checks one property over those cases and names the failing ones.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import _ring_group
import pytest
from _ring_group import GroupRun, describe, group_size, run_group
from _ring_rank import GROUP_HINT, deadlock_hint

WORLD_SIZES = [1, 2, 3, 4]
_RUNS: dict[tuple[str, int], GroupRun] = {}
_SHOW = 3  # failing cases listed per message


@pytest.fixture(scope="module", autouse=True)
def _forkserver() -> None:
    _ring_group.warm_up()


def group(world: int, solution_path: Any, backend: str = "gloo") -> GroupRun:
    key = (backend, world)
    if key not in _RUNS:
        _RUNS[key] = run_group(world, str(solution_path), backend)
    return _RUNS[key]


def checked(run: GroupRun) -> list[tuple[dict[str, Any], dict[int, dict[str, Any]]]]:
    """(case, records by rank) for every case that all ranks finished without an error;
    the records are those of the ranks that took part (a sub-group case has fewer)."""
    return [
        (case, {rank: rec for rank, rec in recs.items() if not rec.get("absent")})
        for case, recs in zip(run.cases, run.records, strict=True)
        if len(recs) == run.world and all(r["ok"] for r in recs.values())
    ]


def fail_with(problems: list[str], header: str) -> None:
    if problems:
        more = f"\n  ... and {len(problems) - _SHOW} more" if len(problems) > _SHOW else ""
        pytest.fail(header + "\n  " + "\n  ".join(problems[:_SHOW]) + more, pytrace=False)


def require_all_cases(run: GroupRun) -> None:
    """Fail with the root cause when the group stopped early: a rank that died or raised
    comes before the ranks that then timed out waiting for it."""
    world = run.world
    header = f"ring_allreduce_ did not complete every case at world size {world}:"
    if run.fatal:
        fail_with([f"W={world}: {run.stop_reason()}"], header)
    for case, recs in zip(run.cases, run.records, strict=True):
        errors = sorted((rank, rec) for rank, rec in recs.items() if not rec["ok"])
        if not errors:
            continue
        deadlocked = [(rank, rec) for rank, rec in errors if rec["kind"] == "deadlock"]
        consequences = ("deadlock", "peer_closed") if deadlocked else ("deadlock",)
        causes = [(rank, rec) for rank, rec in errors if rec["kind"] not in consequences]
        if causes:
            rank, rec = causes[0]
            waited = " (the other ranks then timed out)" if len(causes) < len(errors) else ""
            hint = f"; {GROUP_HINT}" if case.get("members") else ""
            fail_with(
                [f"W={world} {describe(case)}: rank {rank}: {rec['error']}{waited}{hint}"], header
            )
        rank, rec = deadlocked[0]
        hint = GROUP_HINT if case.get("members") else f"hint: {deadlock_hint(rec['error'])}"
        pytest.fail(
            f"deadlock at W={world} {describe(case)}: rank {rank} timed out "
            f"({rec['error']}); {hint}",
            pytrace=False,
        )
    if run.stalled:
        fail_with([f"W={world}: {run.stalled}"], header)
    missing = sum(1 for recs in run.records if len(recs) < world)
    if missing:
        fail_with([f"W={world}: {missing} cases did not run"], header)


# ------------------------------------------------------------------------ interface


def test_interface(solution: Any) -> None:
    fn = getattr(solution, "ring_allreduce_", None)
    assert callable(fn), "define ring_allreduce_(tensor, group=None)"
    params = list(inspect.signature(fn).parameters)
    assert params[:2] == ["tensor", "group"], (
        f"ring_allreduce_ must take (tensor, group=None), it takes ({', '.join(params)})"
    )


# ------------------------------------------------------------------ gloo (CPU) ranks


def incomplete(run: GroupRun) -> None:
    """Skip a property that could not be checked on every case (another test says why)."""
    if len(checked(run)) < len(run.cases):
        pytest.skip(f"W={run.world}: not every case completed (see test_completes_every_case)")


def correct(rec: dict[str, Any]) -> bool:
    """The sum is right in the input tensor, or at least in the returned one."""
    return rec["mismatches"] == 0 or rec.get("out_mismatches", 1) == 0


def sum_problems(run: GroupRun) -> list[str]:
    problems = []
    for case, recs in checked(run):
        for rank, rec in sorted(recs.items()):
            if not correct(rec):
                i, got, want = rec["first_bad"]
                problems.append(
                    f"W={run.world} {describe(case)}: rank {rank} has {rec['mismatches']} "
                    f"elements that differ from dist.all_reduce (first at index {i}: {got!r}, "
                    f"expected {want!r}){why_wrong(case, rec)}"
                )
                break
    return problems


def why_wrong(case: dict[str, Any], rec: dict[str, Any]) -> str:
    """The README rule a wrong sum most likely breaks, for the cases built to catch one."""
    if case.get("layout") and rec.get("unchanged"):
        return (
            f"; the {case['layout']} (non-contiguous) input was not updated in place: README: "
            "the sum must land in `tensor` itself, so copy back what reshape()/contiguous() "
            "copied"
        )
    if case.get("big"):
        return (
            "; int64 must be summed exactly (README): these values sum to about 2^62, "
            "beyond 2^53 where float64 stops being exact"
        )
    if case.get("members"):
        return f"; {GROUP_HINT}"
    return ""


def identity_problems(run: GroupRun) -> list[str]:
    problems = []
    for case, recs in checked(run):
        if not all(rec["mismatches"] == 0 for rec in recs.values()):
            continue  # a wrong or misplaced sum is reported by the other tests
        digests = {rank: rec["digest"] for rank, rec in sorted(recs.items())}
        first = next(iter(digests))
        differing = [r for r, d in digests.items() if d != digests[first]]
        if differing:
            problems.append(
                f"W={run.world} {describe(case)}: ranks {differing} differ bitwise from rank "
                f"{first} (each chunk must be summed once, in one order, and then copied "
                "unchanged, at full precision, to every rank)"
            )
    return problems


def bandwidth_problems(run: GroupRun) -> list[str]:
    problems = []
    for case, recs in checked(run):
        world = group_size(case)
        n = math.prod(case["shape"])
        itemsize = 8 if case["dtype"] in ("float64", "int64") else 4
        optimum = 2 * (world - 1) * math.ceil(n / world) * itemsize
        for rank, rec in sorted(recs.items()):
            if rec["bytes"] > optimum:
                problems.append(
                    f"W={run.world} {describe(case)}: bytes sent per rank {rec['bytes']:,} > ring "
                    f"optimum 2(W-1)*ceil(n/W)*itemsize = {optimum:,} (rank {rank})"
                )
                break
            if rec["sends"] > 2 * (world - 1):
                problems.append(
                    f"W={run.world} {describe(case)}: {rec['sends']} sends per rank, a ring needs "
                    f"only 2(W-1) = {2 * (world - 1)} (rank {rank})"
                )
                break
    return problems


@pytest.fixture(scope="module", params=WORLD_SIZES, ids=lambda w: f"W={w}")
def ring(request: pytest.FixtureRequest, solution_path: Any) -> GroupRun:
    """One process group per world size; pytest runs every test of W=1, then of W=2, ..."""
    return group(request.param, solution_path)


def test_completes_every_case(ring: GroupRun) -> None:
    require_all_cases(ring)


def test_sum_matches_all_reduce(ring: GroupRun) -> None:
    run = ring
    fail_with(sum_problems(run), "wrong sum:")
    incomplete(run)


def test_in_place_and_returned(ring: GroupRun) -> None:
    run, world = ring, ring.world
    problems = []
    for case, recs in checked(run):
        rec = next(iter(sorted(recs.items())))[1]
        if rec.get("rebound") or (rec.get("memory_mismatches") and not rec["mismatches"]):
            problems.append(
                f"{describe(case)}: the tensor holds the sum, but its memory does not: it was "
                "pointed at new storage (tensor.set_(...) or tensor.data = ...), so another "
                "view of the same memory (a gradient bucket) never sees the result; write the "
                "sum into the tensor's own elements (tensor.copy_(result))"
            )
        elif rec.get("gaps_changed"):
            problems.append(
                f"{describe(case)}: {rec['gaps_changed']} elements between the view's elements "
                "were overwritten; write only the tensor's own elements"
            )
        elif rec["returned"] == "none":
            problems.append(f"{describe(case)}: returned None; return the input tensor")
        elif rec["mismatches"] and rec.get("out_mismatches") == 0:
            problems.append(
                f"{describe(case)}: the returned tensor holds the sum but the input tensor "
                "was not updated in place"
            )
        elif rec["returned"] not in ("input", "other", "none"):
            problems.append(
                f"{describe(case)}: returned {rec['returned']}, not the tensor it was given "
                "(return the input tensor itself)"
            )
        elif rec["returned"] == "other" and rec["mismatches"] == 0 and rec["out_mismatches"]:
            problems.append(f"{describe(case)}: the returned tensor is not the reduced input")
    fail_with(problems, f"W={world}: ring_allreduce_ must reduce in place and return the tensor:")
    incomplete(run)


def test_identical_on_every_rank(ring: GroupRun) -> None:
    run = ring
    fail_with(identity_problems(run), "results are not bitwise identical on every rank:")
    incomplete(run)


def test_point_to_point_only(ring: GroupRun) -> None:
    run, world = ring, ring.world
    used = [
        (case, rec["error"])
        for case, recs in zip(run.cases, run.records, strict=True)
        for rec in recs.values()
        if rec.get("kind") == "collective"
    ]
    if used:
        case, error = used[0]
        pytest.fail(f"W={world} {describe(case)}: {error}", pytrace=False)
    incomplete(run)


def test_bandwidth_optimal(ring: GroupRun, record_metric: Any) -> None:
    run, world = ring, ring.world
    fail_with(bandwidth_problems(run), "not bandwidth-optimal:")
    for case, recs in checked(run):
        if case["shape"] == [1_000_000] and case["dtype"] == "float32" and world > 1:
            seconds = max(rec["seconds"] for rec in recs.values())
            baseline = max(rec["baseline"] for rec in recs.values())
            record_metric(f"W={world} 1M fp32 time", seconds * 1e3, "ms")
            record_metric(f"W={world} 1M fp32 time vs gloo all_reduce", seconds / baseline, "x")
    incomplete(run)


# ---------------------------------------------------------------- NCCL on 2+ GPUs


@pytest.mark.cuda
def test_nccl_ring(solution_path: Any) -> None:
    import torch

    count = torch.cuda.device_count()
    if count < 2:
        pytest.skip(f"the NCCL ring needs 2+ CUDA GPUs (found {count})")
    run = group(min(count, 4), solution_path, backend="nccl")
    require_all_cases(run)
    problems = sum_problems(run) + identity_problems(run) + bandwidth_problems(run)
    fail_with(problems, f"NCCL ring over {run.world} GPUs:")
