"""The cases of one world size and how to name them (plain data: no torch here).

A case is a dict: "layer" ("column", "row" or "mlp": a column layer, GELU, a row layer),
the sizes "in", "out" (and "hidden" for the MLP), "bias", "gather" (gather_output),
"lead" (the input's leading dims), "groups" (None: group=None, the whole world; otherwise
the sub-groups of the world, each rank using the one it belongs to), "uneven" (the sizes
do not divide by the group size: the constructor must raise ValueError) and "residual" (the
loss also uses x directly: sum(y * g) + sum(x * x)).
"""

from __future__ import annotations

from typing import Any

SUB_GROUPS = [[0, 2], [1, 3]]  # at W=4: two TP groups of 2 (strided: rank 2 is rank 1 there)


def cases_for(world: int) -> list[dict[str, Any]]:
    """Column, row, gather_output and the MLP pair on the whole world, then (at W=4) on
    the sub-groups, then the uneven sizes that must be rejected."""
    plain: list[dict[str, Any]] = [
        {"layer": "column", "in": 8, "out": 12, "bias": True, "lead": [3]},
        {"layer": "column", "in": 8, "out": 12, "bias": False, "lead": [2, 3]},
        {"layer": "row", "in": 12, "out": 8, "bias": True, "lead": [3]},
        {"layer": "row", "in": 12, "out": 8, "bias": False, "lead": [2, 3]},
        {"layer": "column", "in": 8, "out": 12, "bias": True, "gather": True, "lead": [2, 3]},
        {"layer": "mlp", "in": 8, "hidden": 16, "out": 8, "bias": True, "lead": [2, 3]},
    ]
    cases = [dict(case) for case in plain]
    if world == 4:
        for case in plain:
            if case["bias"]:
                cases.append({**case, "groups": SUB_GROUPS})
    # x used outside the layer too (a residual): only the layer's own part of x.grad is
    # all-reduced, not what the rest of the model adds
    cases.append({**plain[0], "bias": True, "residual": True})
    odd = 2 * world + 1
    cases.append(
        {"layer": "column", "in": 8, "out": odd, "bias": True, "lead": [3], "uneven": True}
    )
    cases.append({"layer": "row", "in": odd, "out": 8, "bias": True, "lead": [3], "uneven": True})
    for seed, case in enumerate(cases):
        case.setdefault("gather", False)
        case.setdefault("groups", None)
        case.setdefault("uneven", False)
        case.setdefault("residual", False)
        case["seed"] = seed
        case["world"] = world
    return cases


def members(case: dict[str, Any], rank: int) -> list[int]:
    """The global ranks of the group that ``rank`` uses in ``case``."""
    if case["groups"] is None:
        return list(range(case["world"]))
    return next(group for group in case["groups"] if rank in group)


def group_text(case: dict[str, Any], rank: int | None = None) -> str:
    """How the case passes `group`, in words."""
    if case["groups"] is None:
        return "group=None (the whole world)"
    if rank is None:
        return "group=" + " / ".join(f"new_group({g})" for g in case["groups"])
    return f"group=new_group({members(case, rank)})"


def describe(case: dict[str, Any], rank: int | None = None) -> str:
    """The case in words: the layer(s), the sizes, the input shape and the group."""
    bias = "" if case["bias"] else ", bias=None"
    if case["layer"] == "mlp":
        text = (
            f"MLP ColumnParallelLinear({case['in']}->{case['hidden']}) -> GELU -> "
            f"RowParallelLinear({case['hidden']}->{case['out']})"
        )
        width = case["in"]
    elif case["layer"] == "column":
        gather = ", gather_output=True" if case["gather"] else ""
        text = f"ColumnParallelLinear(in={case['in']}, out={case['out']}{bias}{gather})"
        width = case["in"]
    else:
        text = f"RowParallelLinear(in={case['in']}, out={case['out']}{bias})"
        width = f"{case['in']}/W"
    shape = ", ".join(str(d) for d in case["lead"])
    also = ", loss sum(y * g) + sum(x * x)" if case.get("residual") else ""
    return f"{text}, x [{shape}, {width}]{also}, {group_text(case, rank)}"


def expected_collectives(case: dict[str, Any]) -> dict[str, dict[str, int]]:
    """The collectives each pass must run, by kind (README table)."""
    if case["layer"] == "column":
        forward = {"all_gather": 1} if case["gather"] else {}
        return {"forward": forward, "backward": {"all_reduce": 1}}
    if case["layer"] == "row":
        return {"forward": {"all_reduce": 1}, "backward": {}}
    return {"forward": {"all_reduce": 1}, "backward": {"all_reduce": 1}}
