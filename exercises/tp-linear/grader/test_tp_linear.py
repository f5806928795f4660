"""Grader for tp-linear: world sizes 2 and 4 over gloo on 127.0.0.1 (CPU).

All cases of one world size run in ONE process group (see _tp_cases.cases_for); each test
below checks one property over those cases and names the first failing ones. Expected
values come from a single-device float64 layer with the full weight, on every rank.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _tp_cases import describe
from _tp_group import OP_TIMEOUT_S, GroupRun
from _tp_report import count_problem, fmt, head, shard_problem, value_problem, wrong_group

_SHOW = 3  # failing cases listed per message


def fail_with(problems: list[str], header: str) -> None:
    """Fail with the first few problems, one per line."""
    if problems:
        more = f"\n  ... and {len(problems) - _SHOW} more" if len(problems) > _SHOW else ""
        pytest.fail(header + "\n  " + "\n  ".join(problems[:_SHOW]) + more, pytrace=False)


def records(run: GroupRun) -> Iterator[tuple[dict[str, Any], int, dict[str, Any]]]:
    """(case, rank, record) for every record the ranks sent, in case order."""
    for case, recs in zip(run.cases, run.records, strict=True):
        for rank, rec in sorted(recs.items()):
            yield case, rank, rec


def finished(run: GroupRun, keep: Callable[[dict[str, Any]], bool]) -> list[Any]:
    """(case, rank, record) of the kept cases that every rank finished without an error."""
    done = []
    for case, recs in zip(run.cases, run.records, strict=True):
        if keep(case) and len(recs) == run.world and all(r["ok"] for r in recs.values()):
            done += [(case, rank, rec) for rank, rec in sorted(recs.items())]
    return done


def first_per_case(problems: list[tuple[int, str]]) -> list[str]:
    """One message per case (the lowest rank's), in case order."""
    seen: dict[int, str] = {}
    for index, text in problems:
        seen.setdefault(index, text)
    return list(seen.values())


def require_started(run: GroupRun) -> None:
    """Fail when a rank could not even start: the file does not import, or lacks a class."""
    if run.fatal:
        rank, message = sorted(run.fatal.items())[0]
        pytest.fail(f"W={run.world}: rank {rank}: {message}", pytrace=False)


def incomplete(run: GroupRun) -> None:
    """Skip a property not checked on every case (test_runs_without_error says why)."""
    if run.fatal or run.stalled or any(len(recs) < run.world for recs in run.records):
        pytest.skip(f"W={run.world}: not every case ran (see test_runs_without_error)")


# ------------------------------------------------------------------ the layers' state


def test_shards_after_init(tp: GroupRun) -> None:
    """Each rank keeps exactly its shard of the full weight and bias, as nn.Parameters."""
    require_started(tp)
    problems = []
    for case, rank, rec in records(tp):
        if case["uneven"]:
            continue
        if rec.get("step") == "__init__" and not rec["ok"]:
            problems.append((case["seed"], f"{head(case, rank)}: __init__ raised {rec['error']}"))
            continue
        for name, shard in rec["shards"].items():
            if not shard["ok"]:
                problems.append(
                    (case["seed"], f"{head(case, rank)}: " + shard_problem(case, rank, name, shard))
                )
                break
    fail_with(first_per_case(problems), f"W={tp.world}: wrong parameter shards after __init__:")


def test_collectives_use_group(tp: GroupRun) -> None:
    """Every collective runs on `group` (the whole world when group=None)."""
    require_started(tp)
    problems = []
    for case, rank, rec in records(tp):
        text = wrong_group(case, rank, rec)
        if text:
            problems.append((case["seed"], text))
    fail_with(first_per_case(problems), f"W={tp.world}: a collective ignored `group`:")


# ------------------------------------------------------------------ errors and hangs


def _root_cause(run: GroupRun, case: dict[str, Any], errors: list[tuple[int, Any]]) -> str:
    causes = [(r, rec) for r, rec in errors if rec["kind"] not in ("timeout", "peer_closed")]
    if causes:
        rank, rec = causes[0]
        after = " (the other ranks then timed out)" if len(causes) < len(errors) else ""
        return f"{head(case, rank)}: {rec['step']} raised {rec['error']}{after}"
    rank, rec = errors[0]
    others = []
    for other in range(run.world):
        orec = run.records[case["seed"]].get(other)
        if other == rank or (orec and not orec["ok"]):
            continue
        others.append(f"rank {other} " + ("finished this case" if orec else run.where(other)))
    then = f" ({'; '.join(others)})" if others else ""
    return (
        f"{head(case, rank)}: {rec['step']} timed out after {OP_TIMEOUT_S:.0f} s: {rec['error']}"
        f"{then}; every rank of `group` must run the same collectives, in the same order"
    )


def test_runs_without_error(tp: GroupRun) -> None:
    """Every case runs to the end on every rank: no exception, no hang, no dead process."""
    require_started(tp)
    for case, recs in zip(tp.cases, tp.records, strict=True):
        errors = sorted((rank, rec) for rank, rec in recs.items() if not rec["ok"])
        if errors:
            pytest.fail(_root_cause(tp, case, errors), pytrace=False)
    if tp.stalled:
        pytest.fail(f"W={tp.world}: {tp.stalled}", pytrace=False)
    missing = [i for i, recs in enumerate(tp.records) if len(recs) < tp.world]
    if missing:
        case = tp.cases[missing[0]]
        pytest.fail(f"W={tp.world}: {describe(case)} did not finish on every rank", pytrace=False)


def test_collectives_per_pass(tp: GroupRun) -> None:
    """Column: none forward (one all_gather with gather_output), one all_reduce backward;
    row: one all_reduce forward, none backward; the MLP pair: one and one."""
    problems = []
    for case, rank, rec in finished(tp, lambda c: not c["uneven"]):
        text = count_problem(case, rank, rec)
        if text:
            problems.append((case["seed"], text))
    fail_with(first_per_case(problems), f"W={tp.world}: wrong collectives:")
    incomplete(tp)


# ------------------------------------------------------------------ values


def _values(
    run: GroupRun, keep: Callable[[dict[str, Any]], bool], keys: Callable[[str], bool]
) -> list[str]:
    """One message per kept case whose compared values (keys) are wrong."""
    problems = []
    for case, rank, rec in finished(run, keep):
        for key, info in rec["cmp"].items():
            if keys(key) and not info["ok"]:
                problems.append((case["seed"], value_problem(case, rank, key, info)))
                break
    return first_per_case(problems)


def _plain(case: dict[str, Any]) -> bool:
    return case["layer"] != "mlp" and not case["gather"] and not case["uneven"]


def test_forward_matches(tp: GroupRun) -> None:
    """Column (sharded output) and row outputs equal the single-device layer's."""
    problems = _values(tp, _plain, lambda key: key == "output")
    fail_with(problems, f"W={tp.world}: wrong forward output:")
    incomplete(tp)


def test_gradients_match(tp: GroupRun) -> None:
    """x.grad, weight.grad and bias.grad equal the single-device layer's (sliced)."""
    problems = _values(tp, _plain, lambda key: key != "output")
    fail_with(problems, f"W={tp.world}: wrong gradients:")
    incomplete(tp)


def test_gather_output(tp: GroupRun) -> None:
    """gather_output=True returns the full output on every rank; its gradients are right."""
    problems = _values(tp, lambda c: c["gather"], lambda key: True)
    fail_with(problems, f"W={tp.world}: ColumnParallelLinear(gather_output=True) is wrong:")
    incomplete(tp)


def test_mlp_pair(tp: GroupRun) -> None:
    """Column (gather_output=False) -> GELU -> row equals the single-device MLP, grads too."""
    problems = _values(tp, lambda c: c["layer"] == "mlp", lambda key: True)
    fail_with(problems, f"W={tp.world}: the column -> row MLP is wrong:")
    incomplete(tp)


def test_uneven_sizes_rejected(tp: GroupRun) -> None:
    """A split dim that the group size does not divide raises ValueError in __init__."""
    problems = []
    for case, rank, rec in records(tp):
        dim = "out_features" if case["layer"] == "column" else "in_features"
        size = case["out"] if case["layer"] == "column" else case["in"]
        if case["uneven"] and rec.get("rejected") == "ValueError" and rec.get("init_ops"):
            ops = fmt(Counter(entry["op"] for entry in rec["init_ops"]))
            problems.append(
                (
                    case["seed"],
                    f"{head(case, rank)}: {dim} = {size} is not divisible by the group size "
                    f"{case['world']}; __init__ raised ValueError, but only after {ops}: "
                    "check the sizes before any communication (README)",
                )
            )
            continue
        if not case["uneven"] or rec.get("rejected") == "ValueError":
            continue
        got = "accepted it" if rec.get("rejected") is None else f"raised {rec.get('message')}"
        problems.append(
            (
                case["seed"],
                f"{head(case, rank)}: {dim} = {size} is not divisible by the group size "
                f"{case['world']}, and __init__ {got}; raise ValueError (README)",
            )
        )
    fail_with(first_per_case(problems), f"W={tp.world}: uneven shards must be rejected:")
    incomplete(tp)
