"""Turn the ranks' records into one actionable sentence per broken property."""

from __future__ import annotations

from collections import Counter
from typing import Any

from _tp_cases import describe, expected_collectives, group_text, members

SPLIT = {
    ("column", "weight"): (
        "column parallel splits the output dim: rank r keeps rows r*out/W:(r+1)*out/W "
        "(dim 0 of the [out, in] weight)"
    ),
    ("column", "bias"): "the column-parallel bias is split like the weight's rows",
    ("row", "weight"): (
        "row parallel splits the input dim: rank r keeps columns r*in/W:(r+1)*in/W "
        "(dim 1 of the [out, in] weight)"
    ),
    ("row", "bias"): (
        "RowParallelLinear keeps the whole bias on every rank and adds it once, after the "
        "all-reduce"
    ),
}


def where(case: dict[str, Any], rank: int) -> tuple[int, int]:
    """(rank within the case's group, size of that group)."""
    ranks = members(case, rank)
    return ranks.index(rank), len(ranks)


def head(case: dict[str, Any], rank: int) -> str:
    """The start of every message: world size, case and rank."""
    return f"W={case['world']} {describe(case, rank)}: rank {rank}"


# ------------------------------------------------------------------ shards


def _layer_and_attr(case: dict[str, Any], name: str) -> tuple[str, str, str]:
    """(kind of layer, attribute, class name) of a shard record's name."""
    if "." in name:
        kind, attr = name.split(".")
    else:
        kind, attr = case["layer"], name
    cls = "ColumnParallelLinear" if kind == "column" else "RowParallelLinear"
    return kind, attr, cls


def shard_problem(case: dict[str, Any], rank: int, name: str, rec: dict[str, Any]) -> str:
    """Why the shard ``name`` ("weight", "row.bias", ...) of ``rank`` is wrong."""
    kind, attr, cls = _layer_and_attr(case, name)
    r, size = where(case, rank)
    split = SPLIT[(kind, attr)]
    label = rec["label"]
    what = f"{cls}.{attr}"
    shape = f"shape {rec.get('shape')}, expected {rec.get('want_shape')}"
    texts = {
        "missing": f"{cls} has no attribute `{attr}`: keep this rank's shard as self.{attr}",
        "none": f"{what} is None although a {attr} was passed",
        "not_none": f"{what} must be None when bias=None is passed",
        "type": f"{what} is a {rec.get('type')}, expected a torch.nn.Parameter",
        "not_param": (
            f"{what} holds the right values but is not a torch.nn.Parameter (a leaf that "
            "requires grad): wrap the shard in torch.nn.Parameter so that it gets a .grad"
        ),
        "dtype": f"{what} has dtype {rec.get('dtype')}, expected float64: keep the dtype given",
        "other_dim": f"{what} is a slice along the wrong dim ({shape}): {split}",
        "world_size": (
            f"{what} is a 1/{case['world']} slice for the whole world ({shape} on "
            f"{group_text(case, rank)}, {size} ranks): take the shard count from "
            "dist.get_world_size(group), not the world"
        ),
        "index": (
            f"{what} is shard {rec.get('index')} of {size}, expected shard {r}: index the "
            "shards by dist.get_rank(group), the rank within `group`"
        ),
        "unsplit": f"{what} holds the whole tensor ({shape}): {split}",
        "split": f"{what} holds only a slice of the bias ({shape}): {split}",
    }
    if label == "storage" and rec.get("storage") == "shared":
        return (
            f"{what} holds the right values but is a view of the tensor passed to __init__ "
            "(it shares its memory, so the whole tensor stays alive and a later change of it "
            "changes the layer): keep a copy of this rank's slice (.clone())"
        )
    if label == "storage":
        kept, shard = rec["kept"], rec["shard"]
        return (
            f"{what} holds the right values but its storage keeps {kept} bytes for a shard "
            f"of {shard}: copy the slice (.clone()), so that each rank keeps only its shard"
        )
    if label == "empty" and rank != r:
        return (
            f"{what} is empty ({shape}): index the shards by dist.get_rank(group), the rank "
            f"within `group` (rank {rank} is rank {r} of {group_text(case, rank)}), not the "
            "global rank"
        )
    return texts.get(label, f"{what} is not this rank's shard ({shape}): {split}")


# ------------------------------------------------------------------ collectives


def fmt(counts: Counter[str] | dict[str, int]) -> str:
    """ "1 all_reduce + 1 all_to_all" or "no collective"."""
    items = [f"{n} {op}" for op, n in sorted(counts.items()) if n]
    return " + ".join(items) if items else "no collective"


def wrong_group(case: dict[str, Any], rank: int, rec: dict[str, Any]) -> str | None:
    """A collective of the case that ran on another process group than `group`."""
    for phase, log in rec.get("passes", {}).items():
        for entry in log:
            if not entry["right"]:
                ranks = entry["ranks"]
                which = " (the default group)" if len(ranks) == case["world"] else ""
                return (
                    f"{head(case, rank)}: the {phase} ran {entry['op']} on ranks {ranks}{which}, "
                    f"not on `group` (ranks {members(case, rank)}): pass group=group to every "
                    "collective, and group=None only means the whole world"
                )
    return None


def _why(case: dict[str, Any], phase: str, seen: Counter[str], want: dict[str, int]) -> str:
    layer, gather = case["layer"], case["gather"]
    if layer == "column" and phase == "backward" and seen["all_reduce"] < 1:
        return (
            "every rank holds only its part grad_out_r @ W_r of dL/dx: sum the parts with "
            "one all_reduce over `group` in backward (Megatron's f: identity forward, "
            "all-reduce backward)"
        )
    if layer == "row" and phase == "backward":
        return (
            "a row-parallel layer's input gradient is local, because grad_output is "
            "already the same on every rank; torch.distributed.nn.functional.all_reduce "
            "also all-reduces in its backward, so wrap dist.all_reduce in your own "
            "autograd.Function with an identity backward"
        )
    if layer == "column" and phase == "backward" and gather:
        return (
            "the backward of the all-gather is this rank's slice of grad_output, which is "
            "the same on every rank: no communication (torch.distributed.nn.functional."
            "all_gather sums the gradient over the group in its backward)"
        )
    if layer == "column" and phase == "forward" and not gather:
        return "column-parallel forward is local: each rank computes its own output columns"
    if layer == "column" and phase == "forward":
        return "gather_output=True needs exactly one all_gather of the output shards"
    if layer == "row" and phase == "forward":
        return "sum the partial outputs x_r W_r^T with exactly one all_reduce over `group`"
    return (
        "the column -> row pair needs exactly one all_reduce in forward (the row layer's "
        "output) and one in backward (the column layer's input gradient)"
    )


def count_problem(case: dict[str, Any], rank: int, rec: dict[str, Any]) -> str | None:
    """A pass whose collectives differ from the README table, or whose backward ran through a
    collective that autograd has no formula for."""
    for phase, op in rec.get("fallback", {}).items():
        return (
            f"{head(case, rank)}: the {phase} went through {op}, an in-place collective "
            "on a tensor that requires grad, which autograd has no formula for (PyTorch warns "
            "that this may be silently wrong and will stop working): call the collective "
            "inside your own torch.autograd.Function and write its backward (README)"
        )
    for phase, want in expected_collectives(case).items():
        seen = Counter(entry["op"] for entry in rec["passes"].get(phase, []))
        if seen != Counter(want):
            return (
                f"{head(case, rank)}: {phase} ran {fmt(seen)}, expected {fmt(want)}: "
                f"{_why(case, phase, seen, want)}"
            )
    return None


# ------------------------------------------------------------------ values


def _hint(case: dict[str, Any], key: str, like: str, size: int) -> str:
    if like == "bias_every_rank":
        return (
            f"it equals x W^T + {size}*b: the bias was added on every rank before the "
            "all-reduce; add it once, after the all-reduce"
        )
    if like == "no_reduce":
        return (
            "it is this rank's partial sum x_r W_r^T (+ b): sum the partial outputs over "
            "`group` with one all_reduce"
        )
    if like == "no_bias":
        return "the bias is missing: add it once, after the all-reduce"
    if like == "partial":
        return (
            "it is only this rank's part grad_out_r @ W_r: all-reduce the input gradient "
            "over `group` in backward"
        )
    if like == "permuted" and key == "output" and case["gather"]:
        return (
            "it holds the right values in the wrong places: rank r's shard must fill columns "
            "r*out/W:(r+1)*out/W; all_gather_into_tensor stacks the shards along dim 0, so "
            "split them there and concatenate along the last dim"
        )
    if like == "permuted":
        return "it holds the right values in the wrong places"
    if like == "hook_on_input":
        return (
            "x.grad is wrong only because x is also used outside the layer: the input "
            "gradient was all-reduced after the rest of the model's part had been added to it "
            "(a hook on the caller's x sees its whole gradient). All-reduce only the layer's "
            "own part: an autograd.Function, or a hook on a tensor the layer makes (x.view_as(x))"
        )
    if like == "divided":
        if key.endswith("bias.grad") and (case["layer"] == "row" or key.startswith("row")):
            return (
                f"{key} is the expected gradient divided by W={size}: the bias is replicated "
                "and added once, so every rank's bias.grad is the full sum of grad_output"
            )
        if key == "x.grad":
            return (
                f"x.grad is the expected gradient divided by W={size}: the all-reduce must "
                "SUM the partial gradients (each rank holds a different part), no averaging "
                "as in data parallel"
            )
        return f"{key} is the expected gradient divided by W={size}: do not divide by W"
    if like == "times_W":
        return (
            f"{key} is W={size} times the expected gradient: grad_output is already the same "
            "on every rank, so summing it over the group counts it W times"
        )
    return ""


def value_problem(case: dict[str, Any], rank: int, key: str, info: dict[str, Any]) -> str:
    """Why ``key`` ("output", "x.grad", "row.weight.grad", ...) differs from the
    single-device float64 layer."""
    _, size = where(case, rank)
    prefix = f"{head(case, rank)}: {key}"
    if info.get("none"):
        hint = (
            "the gradient did not reach the input: keep the forward differentiable"
            if key == "x.grad"
            else "the parameter got no gradient: use the nn.Parameter itself in forward"
        )
        return f"{prefix} is None after backward: {hint}"
    if "type" in info:
        return f"{prefix} is a {info['type']}, expected a tensor"
    if info["shape"] != info["want_shape"]:
        extra = ""
        if key == "output" and case["layer"] == "column" and not case["gather"]:
            extra = ": without gather_output the output stays sharded, [..., out/W]"
        elif key == "output" and case["gather"]:
            extra = ": with gather_output=True every rank returns the full [..., out]"
        return f"{prefix} has shape {info['shape']}, expected {info['want_shape']}{extra}"
    if info["dtype"] != "float64":
        return f"{prefix} has dtype {info['dtype']}, expected float64 (the input's dtype)"
    for like in info.get("like", []):
        hint = _hint(case, key, like, size)
        if hint:
            return f"{prefix}: {hint}"
    i, got, want = info["first_bad"]
    return (
        f"{prefix} differs from the single-device float64 layer by up to {info['err']:.3g} "
        f"(first at flat index {i}: {got:.6g}, expected {want:.6g})"
    )
