"""What each rank runs: join the group, record every collective, run the cases and compare
each shard, output and gradient with a single-device float64 layer.

A rank puts plain dicts on a queue: ("step", rank, index, step) before each step (so the
parent can say where a rank got stuck), ("case", rank, index, record) after each case,
then ("done", rank) or ("fatal", rank, message). The ranks agree through the TCP store,
never through a collective, so the grader adds nothing to the collectives it counts.
"""

from __future__ import annotations

import contextlib
import os
import re
import traceback
import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any

from _tp_cases import SUB_GROUPS, members

TOL = 1e-10  # float64 against float64: any real mistake is off by far more

# ProcessGroup methods behind the torch.distributed calls, and the names users know them by.
COLLECTIVES = {
    "allreduce": "all_reduce",
    "allreduce_coalesced": "all_reduce",
    "allgather": "all_gather",
    "_allgather_base": "all_gather",
    "allgather_coalesced": "all_gather",
    "allgather_into_tensor_coalesced": "all_gather",
    "all_gather_single": "all_gather",
    "reduce_scatter": "reduce_scatter",
    "_reduce_scatter_base": "reduce_scatter",
    "reduce_scatter_tensor_coalesced": "reduce_scatter",
    "alltoall": "all_to_all",
    "alltoall_base": "all_to_all",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "gather": "gather",
    "scatter": "scatter",
    "barrier": "barrier",
    "send": "send",
    "recv": "recv",
    "recv_anysource": "recv",
}
FUNCTIONAL = ("all_reduce", "all_gather_tensor", "reduce_scatter_tensor", "all_to_all_single")


class FunctionalUsed(RuntimeError):
    """Raised when the user's code calls a functional collective (not counted here)."""


class Log:
    """The collectives run while ``active`` is a list (one pass of one case)."""

    def __init__(self) -> None:
        self.active: list[dict[str, Any]] | None = None
        self.expected: Any = None  # the ProcessGroup the case's layers must use
        self.ranks: dict[int, list[int]] = {}  # id(ProcessGroup) -> its global ranks


LOG = Log()


def _ranks_of(pg: Any) -> list[int]:
    import torch.distributed as dist

    if id(pg) not in LOG.ranks:
        try:
            LOG.ranks[id(pg)] = list(dist.get_process_group_ranks(pg))
        except Exception:
            LOG.ranks[id(pg)] = []
    return LOG.ranks[id(pg)]


def install_patches() -> None:
    """Record every collective and point-to-point call; functional collectives raise."""
    from torch._C._distributed_c10d import ProcessGroup

    def recorded(public: str, original: Any) -> Any:
        def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
            if LOG.active is not None:
                entry = {"op": public, "right": self is LOG.expected, "ranks": _ranks_of(self)}
                LOG.active.append(entry)
            return original(self, *args, **kwargs)

        return patched

    for method, public in COLLECTIVES.items():
        original = ProcessGroup.__dict__.get(method)
        if original is not None:
            setattr(ProcessGroup, method, recorded(public, original))
    try:
        import torch.distributed._functional_collectives as fc
    except ImportError:  # pragma: no cover - older torch
        return

    def forbid(name: str) -> Any:
        def patched(*args: Any, **kwargs: Any) -> Any:
            raise FunctionalUsed(
                f"_functional_collectives.{name} is not allowed here: use dist.all_reduce / "
                "dist.all_gather / dist.all_gather_into_tensor (README)"
            )

        return patched

    for name in FUNCTIONAL:
        if hasattr(fc, name):
            setattr(fc, name, forbid(name))


# ------------------------------------------------------------------ comparisons


def compare(got: Any, want: Any, variants: dict[str, Any]) -> dict[str, Any]:
    """How ``got`` relates to ``want``: ok, or its shape/error and the wrong variants it
    matches (e.g. "divided": want / W)."""
    import torch

    if got is None:
        return {"ok": False, "none": True}
    if not isinstance(got, torch.Tensor):
        return {"ok": False, "type": type(got).__name__}
    got = got.detach()
    info: dict[str, Any] = {
        "shape": list(got.shape),
        "want_shape": list(want.shape),
        "dtype": str(got.dtype).removeprefix("torch."),
    }
    if got.shape != want.shape:
        info["ok"] = False
        return info
    close = got.dtype == want.dtype and torch.allclose(got, want, rtol=TOL, atol=TOL)
    info["ok"] = bool(close)
    if close:
        return info
    g = got.to(want.dtype)
    info["err"] = float((g - want).abs().max())
    flat = int((g - want).abs().reshape(-1).argmax())
    info["first_bad"] = [flat, float(g.reshape(-1)[flat]), float(want.reshape(-1)[flat])]
    info["like"] = [
        name
        for name, v in variants.items()
        if v.shape == g.shape and torch.allclose(g, v, rtol=1e-8, atol=1e-8)
    ]
    if not info["like"] and torch.allclose(
        g.reshape(-1).sort().values, want.reshape(-1).sort().values, rtol=1e-8, atol=1e-8
    ):
        info["like"] = ["permuted"]
    return info


def grad_variants(want: Any, size: int) -> dict[str, Any]:
    """The gradient scaled by the group size either way (summed or averaged once too often)."""
    return {"times_W": want * size, "divided": want / size}


def _storage_problem(data: Any, given: Any) -> dict[str, Any] | None:
    """Why a shard with the right values is not a copy of its own: {"storage": "shared"} (a
    view of the tensor passed to __init__) or {"storage": "oversized", "kept": bytes,
    "shard": bytes} (its storage holds more than the shard); None when it is one."""
    kept, shard = data.untyped_storage().nbytes(), data.numel() * data.element_size()
    if given is not None and data.untyped_storage().data_ptr() == (
        given.untyped_storage().data_ptr()
    ):
        return {"storage": "shared"}
    if kept > shard:
        return {"storage": "oversized", "kept": kept, "shard": shard}
    return None


def check_shard(
    got: Any,
    full: Any,
    dim: int | None,
    r: int,
    size: int,
    world: int,
    global_rank: int,
    given: Any = None,
) -> dict[str, Any]:
    """Is ``got`` shard ``r`` of ``size`` of ``full`` along ``dim`` (None: all of it), as
    an nn.Parameter holding a copy of its own (not a view of ``given``, the tensor passed to
    __init__)? If not, which wrong slice is it ("other_dim", "world_size", "index",
    "unsplit", "empty", "values", "shape", "storage")?"""
    import torch

    if full is None:
        return {"ok": got is None, "label": "not_none" if got is not None else "ok"}
    if got is None:
        return {"ok": False, "label": "none"}
    if not isinstance(got, torch.Tensor):
        return {"ok": False, "label": "type", "type": type(got).__name__}
    want = full if dim is None else full.chunk(size, dim)[r]
    rec: dict[str, Any] = {
        "shape": list(got.shape),
        "want_shape": list(want.shape),
        "param": isinstance(got, torch.nn.Parameter) and got.requires_grad and got.is_leaf,
        "dtype": str(got.dtype).removeprefix("torch."),
        "global_rank": global_rank,
    }
    data = got.detach()
    if data.shape == want.shape and torch.equal(data.to(want.dtype), want):
        rec["ok"] = rec["param"] and data.dtype == want.dtype
        rec["label"] = "ok" if rec["param"] else "not_param"
        if rec["param"] and data.dtype != want.dtype:
            rec["label"] = "dtype"
        elif rec["ok"] and (storage := _storage_problem(data, given)):
            rec.update(ok=False, label="storage", **storage)
        return rec
    rec["ok"] = False
    rec["label"] = "empty" if data.numel() == 0 else "values"
    if data.shape != want.shape and data.numel():
        rec["label"] = "shape"
    elif data.dtype != want.dtype and torch.allclose(data.to(want.dtype), want, rtol=1e-5):
        rec["label"] = "dtype"
        return rec
    for axis in range(full.dim()):
        for count in sorted({1, size, world}):
            if full.shape[axis] % count:
                continue
            for k, piece in enumerate(full.chunk(count, axis)):
                if piece.shape != data.shape or not torch.equal(data.to(piece.dtype), piece):
                    continue
                if count == 1:
                    rec["label"] = "unsplit"
                elif dim is None:
                    rec["label"] = "split"
                elif dim is not None and axis != dim:
                    rec["label"] = "other_dim"
                elif count != size:
                    rec["label"] = "world_size"
                elif k != r:
                    rec["label"], rec["index"] = "index", k
                return rec
    return rec


# ------------------------------------------------------------------ one case


# PyTorch's warning when backward runs through an op that has no autograd formula
_FALLBACK = "an autograd kernel was not registered"


class CaseError(Exception):
    """The user's code raised during a step; the record says which and where."""


def _user_frame(exc: BaseException, solution: str) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == solution]
    return f" (at {Path(solution).name} line {frames[-1].lineno})" if frames else ""


def _error(exc: BaseException, solution: str) -> tuple[str, str]:
    text = re.sub(r"\[[^\]]*\.(cc|cpp|h):\d+\] ", "", f"{type(exc).__name__}: {exc}")
    text = (text.splitlines() or [type(exc).__name__])[0][:300]
    low = text.lower()
    if isinstance(exc, NotImplementedError):
        kind = "not_implemented"
    elif isinstance(exc, FunctionalUsed):
        kind = "functional"
    elif "timed out" in low or "timeout" in low:
        kind = "timeout"
    elif "closed by peer" in low or "reset by peer" in low or "connection closed" in low:
        kind = "peer_closed"
    else:
        kind = "exception"
    return kind, text + _user_frame(exc, solution)


class Runner:
    """Runs the steps of one case on this rank and fills its record."""

    def __init__(self, case: dict[str, Any], index: int, rank: int, ctx: dict[str, Any]) -> None:
        self.case, self.index, self.rank, self.ctx = case, index, rank, ctx
        self.rec: dict[str, Any] = {"ok": True, "shards": {}, "cmp": {}, "passes": {}}

    def step(self, name: str, fn: Any) -> Any:
        """Run ``fn`` as step ``name``; an exception is recorded and ends the case."""
        self.ctx["queue"].put(("step", self.rank, self.index, name))
        self.rec["step"] = name
        try:
            return fn()
        except Exception as exc:
            kind, text = _error(exc, self.ctx["solution"])
            self.rec.update(ok=False, kind=kind, error=text)
            raise CaseError from exc
        finally:
            LOG.active = None

    def counted(self, name: str, fn: Any) -> Any:
        """A step whose collectives are recorded as the pass ``name``."""
        log: list[dict[str, Any]] = []
        self.rec["passes"][name] = log

        def run() -> Any:
            LOG.active = log
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                result = fn()
            for w in seen:
                if _FALLBACK in str(w.message):
                    self.rec.setdefault("fallback", {})[name] = str(w.message).split(":")[0]
            return result

        return self.step(name, run)


def _tensors(case: dict[str, Any], seed: int) -> dict[str, Any]:
    import torch

    gen = torch.Generator().manual_seed(seed)

    def rand(*shape: int) -> Any:
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    lead = case["lead"]
    t = {"x": rand(*lead, case["in"])}
    if case["layer"] == "mlp":
        t.update(w1=rand(case["hidden"], case["in"]), b1=rand(case["hidden"]))
        t.update(w2=rand(case["out"], case["hidden"]), b2=rand(case["out"]))
    else:
        t.update(w=rand(case["out"], case["in"]), b=rand(case["out"]))
    t["g"] = rand(*lead, case["out"])
    return t


def run_case(
    module: Any, case: dict[str, Any], index: int, rank: int, ctx: dict[str, Any]
) -> dict[str, Any]:
    """Run one case on this rank; returns its record (never raises for the user's code)."""
    group_ranks = members(case, rank)
    runner = Runner(case, index, rank, ctx)
    group = None if case["groups"] is None else ctx["subs"][SUB_GROUPS.index(group_ranks)]
    LOG.expected = ctx["world_pg"] if group is None else group
    gi = 0 if case["groups"] is None else case["groups"].index(group_ranks)
    where = {
        "r": group_ranks.index(rank),
        "size": len(group_ranks),
        "world": case["world"],
        "global_rank": rank,
        "group": group,
        "seed": 100 * case["seed"] + gi,
    }
    try:
        if case["uneven"]:
            _uneven(module, case, runner, where)
        elif case["layer"] == "mlp":
            _mlp(module, case, runner, where)
        else:
            _single(module, case, runner, where)
    except CaseError:
        pass
    return runner.rec


def _uneven(module: Any, case: dict[str, Any], runner: Runner, where: dict[str, Any]) -> None:
    t = _tensors(case, where["seed"])
    cls = module.ColumnParallelLinear if case["layer"] == "column" else module.RowParallelLinear
    runner.ctx["queue"].put(("step", runner.rank, runner.index, "__init__"))
    runner.rec["step"] = "__init__"
    log: list[dict[str, Any]] = []
    runner.rec["init_ops"] = log
    LOG.active = log
    try:
        cls(t["w"].clone(), t["b"].clone(), group=where["group"])
    except ValueError as exc:
        runner.rec["rejected"] = "ValueError"
        runner.rec["message"] = str(exc)[:200]
        return
    except Exception as exc:
        runner.rec["rejected"] = type(exc).__name__
        runner.rec["message"] = _error(exc, runner.ctx["solution"])[1]
        return
    finally:
        LOG.active = None
    runner.rec["rejected"] = None


def _single(module: Any, case: dict[str, Any], runner: Runner, where: dict[str, Any]) -> None:
    import torch.nn.functional as F

    t = _tensors(case, where["seed"])
    r, size = where["r"], where["size"]
    x, w, b, g = t["x"], t["w"], t["b"] if case["bias"] else None, t["g"]
    xr, wr = x.clone().requires_grad_(), w.clone().requires_grad_()
    br = b.clone().requires_grad_() if b is not None else None
    y = F.linear(xr, wr, br)
    y.backward(g)
    column = case["layer"] == "column"
    part = (case["out"] if column else case["in"]) // size
    sl = slice(r * part, (r + 1) * part)
    if column:
        cls = module.ColumnParallelLinear
        kwargs = {"gather_output": case["gather"], "group": where["group"]}
        x_user = x.clone().requires_grad_()
        shards = {"weight": (w, 0), "bias": (b, 0)}
        out_want = y.detach() if case["gather"] else y.detach()[..., sl]
        g_user = g if case["gather"] else g[..., sl].clone()
        want = {"x.grad": xr.grad, "weight.grad": wr.grad[sl]}
        if b is not None:
            want["bias.grad"] = br.grad[sl]
        extra = {"x.grad": {"partial": g[..., sl] @ w[sl]}}
        out_variants: dict[str, Any] = {}
    else:
        cls = module.RowParallelLinear
        kwargs = {"group": where["group"]}
        x_user = x[..., sl].clone().requires_grad_()
        shards = {"weight": (w, 1), "bias": (b, None)}
        out_want, g_user = y.detach(), g
        want = {"x.grad": xr.grad[..., sl], "weight.grad": wr.grad[:, sl]}
        partial = x[..., sl] @ w[:, sl].T
        out_variants = {"no_reduce": partial if b is None else partial + b}
        if b is not None:
            want["bias.grad"] = br.grad
            out_variants["bias_every_rank"] = y.detach() + (size - 1) * b
            out_variants["no_bias"] = y.detach() - b
        extra = {}
    given = {"weight": w.clone(), "bias": None if b is None else b.clone()}
    layer = runner.counted("__init__", lambda: cls(given["weight"], given["bias"], **kwargs))
    for name, (full, dim) in shards.items():
        got = getattr(layer, name, "missing")
        runner.rec["shards"][name] = (
            {"ok": False, "label": "missing"}
            if isinstance(got, str)
            else check_shard(
                got, full, dim, r, size, where["world"], where["global_rank"], given[name]
            )
        )
    out = runner.counted("forward", lambda: layer(x_user))
    runner.rec["cmp"]["output"] = compare(out, out_want, out_variants)
    if case.get("residual"):  # x is used outside the layer too: its gradient adds 2x
        want["x.grad"] = want["x.grad"] + 2 * x
        extra["x.grad"] = {k: v + 2 * x for k, v in extra.get("x.grad", {}).items()}
        extra["x.grad"]["hook_on_input"] = xr.grad + size * 2 * x
        runner.counted("backward", lambda: _backward(out, g_user, also=x_user))
    else:
        runner.counted("backward", lambda: _backward(out, g_user))
    got = {
        "x.grad": x_user.grad,
        "weight.grad": _grad(layer, "weight"),
        "bias.grad": _grad(layer, "bias"),
    }
    for name, value in want.items():
        variants = {**grad_variants(value, size), **extra.get(name, {})}
        runner.rec["cmp"][name] = compare(got[name], value, variants)


def _backward(out: Any, grad: Any, also: Any = None) -> None:
    """out.backward(grad), with a clear error when forward returned something else; with
    ``also`` (the input), the backward of sum(out * grad) + sum(also * also)."""
    import torch

    if not isinstance(out, torch.Tensor):
        raise TypeError(
            f"forward returned a {type(out).__name__}, expected the output tensor only (README)"
        )
    if also is None:
        out.backward(grad)
    else:
        ((out * grad).sum() + (also * also).sum()).backward()


def _grad(layer: Any, name: str) -> Any:
    param = getattr(layer, name, None)
    return getattr(param, "grad", None)


def _mlp(module: Any, case: dict[str, Any], runner: Runner, where: dict[str, Any]) -> None:
    import torch.nn.functional as F

    t = _tensors(case, where["seed"])
    r, size = where["r"], where["size"]
    ref = {k: t[k].clone().requires_grad_() for k in ("x", "w1", "b1", "w2", "b2")}
    y = F.linear(F.gelu(F.linear(ref["x"], ref["w1"], ref["b1"])), ref["w2"], ref["b2"])
    y.backward(t["g"])
    part = case["hidden"] // size
    sl = slice(r * part, (r + 1) * part)
    group = where["group"]

    given = {k: t[k].clone() for k in ("w1", "b1", "w2", "b2")}

    def build() -> Any:
        col = module.ColumnParallelLinear(
            given["w1"], given["b1"], gather_output=False, group=group
        )
        row = module.RowParallelLinear(given["w2"], given["b2"], group=group)
        return col, row

    col, row = runner.counted("__init__", build)
    shards = {
        "column.weight": (col, "weight", "w1", 0),
        "column.bias": (col, "bias", "b1", 0),
        "row.weight": (row, "weight", "w2", 1),
        "row.bias": (row, "bias", "b2", None),
    }
    for name, (layer, attr, key, dim) in shards.items():
        got = getattr(layer, attr, "missing")
        runner.rec["shards"][name] = (
            {"ok": False, "label": "missing"}
            if isinstance(got, str)
            else check_shard(
                got, t[key], dim, r, size, where["world"], where["global_rank"], given[key]
            )
        )
    x_user = t["x"].clone().requires_grad_()
    out = runner.counted("forward", lambda: row(F.gelu(col(x_user))))
    variants = {"bias_every_rank": y.detach() + (size - 1) * t["b2"]}
    runner.rec["cmp"]["output"] = compare(out, y.detach(), variants)
    runner.counted("backward", lambda: _backward(out, t["g"]))
    want = {
        "x.grad": (x_user.grad, ref["x"].grad),
        "column.weight.grad": (_grad(col, "weight"), ref["w1"].grad[sl]),
        "column.bias.grad": (_grad(col, "bias"), ref["b1"].grad[sl]),
        "row.weight.grad": (_grad(row, "weight"), ref["w2"].grad[:, sl]),
        "row.bias.grad": (_grad(row, "bias"), ref["b2"].grad),
    }
    for name, (got, value) in want.items():
        runner.rec["cmp"][name] = compare(got, value, grad_variants(value, size))


# ------------------------------------------------------------------ the rank


def rank_main(
    rank: int,
    world: int,
    port: int,
    solution: str,
    cases: list[dict[str, Any]],
    op_timeout: float,
    queue: Any,
    stderr_path: str | None = None,
) -> None:
    """Entry point of one rank (started by the parent with forkserver or spawn)."""
    if stderr_path:
        fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 2)
        os.close(fd)
    try:
        _rank_main(rank, world, port, solution, cases, op_timeout, queue)
    except BaseException as exc:
        queue.put(("fatal", rank, f"{type(exc).__name__}: {exc}".splitlines()[0][:400]))
    finally:
        queue.close()
        queue.join_thread()
        os._exit(0)  # skip destroy_process_group: it can hang after a timeout


INTERFACE = {
    "ColumnParallelLinear": "class ColumnParallelLinear(torch.nn.Module)",
    "RowParallelLinear": "class RowParallelLinear(torch.nn.Module)",
}


def _interface_problem(module: Any) -> str | None:
    import torch

    for name, wanted in INTERFACE.items():
        cls = getattr(module, name, None)
        if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
            return f"tp_linear.py must define {wanted} (README: Interface)"
    return None


def _rank_main(
    rank: int,
    world: int,
    port: int,
    solution: str,
    cases: list[dict[str, Any]],
    op_timeout: float,
    queue: Any,
) -> None:
    import torch
    import torch.distributed as dist

    from quizzer.exercises.plugin import SolutionLoadError, load_solution

    torch.set_num_threads(1)
    store = dist.TCPStore("127.0.0.1", port, world, rank == 0, timeout=timedelta(seconds=60))
    timeout = timedelta(seconds=op_timeout)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=world, timeout=timeout)
    subs = []
    if any(case["groups"] for case in cases):
        subs = [dist.new_group(ranks, timeout=timeout) for ranks in SUB_GROUPS]
    install_patches()
    try:
        module = load_solution(solution)
    except SolutionLoadError as exc:
        queue.put(("fatal", rank, exc.message))
        return
    problem = _interface_problem(module)
    if problem:
        queue.put(("fatal", rank, problem))
        return
    ctx = {"queue": queue, "solution": solution, "subs": subs, "world_pg": dist.group.WORLD}
    for index, case in enumerate(cases):
        rec = run_case(module, case, index, rank, ctx)
        queue.put(("case", rank, index, rec))
        if not _everyone_ok(store, rank, world, index, rec["ok"], op_timeout):
            break  # a rank raised: the group's collectives may be out of step, stop here
    queue.put(("done", rank))
    _leave(store, rank, world, op_timeout)


def _leave(store: Any, rank: int, world: int, wait: float) -> None:
    """Rank 0 hosts the store: it stays until every rank has finished with it."""
    with contextlib.suppress(Exception):
        store.set(f"leave/rank{rank}", "1")
        if rank == 0:
            store.wait([f"leave/rank{r}" for r in range(world)], timedelta(seconds=wait + 10))


def _everyone_ok(store: Any, rank: int, world: int, index: int, ok: bool, wait: float) -> bool:
    """Did every rank finish case ``index`` without an error? (Agreed through the store.)"""
    store.set(f"case{index}/rank{rank}", "ok" if ok else "error")
    keys = [f"case{index}/rank{r}" for r in range(world)]
    try:
        store.wait(keys, timedelta(seconds=wait + 5))
    except Exception:
        return False
    return all(store.get(key) == b"ok" for key in keys)
