"""What each rank runs: join the group, forbid collectives, count bytes sent, run the cases.

Each rank puts plain dicts on a queue: ("case", rank, index, record), then ("done", rank)
or ("fatal", rank, message). The parent (_ring_group.py) turns them into a report.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
import traceback
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

SEND_HINT = "every rank blocks in send: use isend/irecv or alternate order"
RECV_HINT = "every rank blocks in recv and nobody sends first: use isend/irecv or alternate order"
DEADLOCK_HINT = "a send or recv that no peer matches: use isend/irecv or alternate order"
GROUP_HINT = (
    "README: ring_allreduce_ reduces over `group` only: use dist.get_world_size(group) and "
    "dist.get_rank(group), and send/recv to GLOBAL ranks dist.get_global_rank(group, r)"
)
SIZE_HINT = (
    "a send and a recv paired up with different sizes: both sides must agree on every "
    "chunk's length, empty chunks included"
)
SUB_GROUP = [1, 3]  # at W=4 the last cases run on this sub-group only (not 0-based, with a gap)
SUB_TIMEOUT_S = 5.0  # the sub-group's own process-group timeout


def deadlock_hint(error: str) -> str:
    """The hint for a timed-out point-to-point call, from the operation that timed out."""
    if "for recv" in error:
        return RECV_HINT
    if "for send" in error:
        return SEND_HINT
    return DEADLOCK_HINT


# ProcessGroup methods behind every torch.distributed collective, and the public names.
COLLECTIVES = {
    "allreduce": "all_reduce",
    "allreduce_coalesced": "all_reduce_coalesced",
    "allgather": "all_gather",
    "allgather_coalesced": "all_gather_coalesced",
    "allgather_into_tensor_coalesced": "all_gather_into_tensor",
    "all_gather_single": "all_gather_into_tensor",
    "all_gather_single_coalesced": "all_gather_into_tensor",
    "_allgather_base": "all_gather_into_tensor",
    "alltoall": "all_to_all",
    "alltoall_base": "all_to_all_single",
    "all_to_all_single": "all_to_all_single",
    "barrier": "barrier",
    "monitored_barrier": "monitored_barrier",
    "broadcast": "broadcast",
    "gather": "gather",
    "scatter": "scatter",
    "reduce": "reduce",
    "reduce_scatter": "reduce_scatter",
    "reduce_scatter_single": "reduce_scatter_tensor",
    "reduce_scatter_single_coalesced": "reduce_scatter_tensor",
    "reduce_scatter_tensor_coalesced": "reduce_scatter_tensor",
    "_reduce_scatter_base": "reduce_scatter_tensor",
}
FUNCTIONAL = (
    "all_reduce",
    "all_gather_tensor",
    "reduce_scatter_tensor",
    "all_to_all_single",
    "broadcast",
    "all_reduce_inplace",
    "all_gather_into_tensor",
    "permute_tensor",
)


class CollectiveUsed(RuntimeError):
    """Raised inside the user's code when it calls a collective."""


class Counters:
    def __init__(self) -> None:
        self.allow = 0  # > 0 while the grader itself calls a collective
        self.sends = 0
        self.bytes = 0


COUNTERS = Counters()


@contextmanager
def grader_collectives():
    COUNTERS.allow += 1
    try:
        yield
    finally:
        COUNTERS.allow -= 1


def install_patches() -> None:
    """Collectives raise (unless the grader calls them); every send is counted."""
    from torch._C._distributed_c10d import ProcessGroup

    def forbid(shown: str, original: Any) -> Any:
        def patched(*args: Any, **kwargs: Any) -> Any:
            if COUNTERS.allow:
                return original(*args, **kwargs)
            raise CollectiveUsed(
                f"ring_allreduce_ called the collective {shown}; "
                "point-to-point only: use send/recv/isend/irecv/batch_isend_irecv"
            )

        return patched

    for pg_name, public in COLLECTIVES.items():
        original = ProcessGroup.__dict__.get(pg_name)
        if original is not None:
            shown = f"dist.{public} or ProcessGroup.{pg_name}"
            setattr(ProcessGroup, pg_name, forbid(shown, original))

    original_send = ProcessGroup.__dict__["send"]

    def counted_send(self: Any, tensors: Any, *args: Any, **kwargs: Any) -> Any:
        if not COUNTERS.allow:
            COUNTERS.sends += 1
            COUNTERS.bytes += sum(t.numel() * t.element_size() for t in tensors)
        return original_send(self, tensors, *args, **kwargs)

    ProcessGroup.send = counted_send
    try:
        import torch.distributed._functional_collectives as fc
    except ImportError:  # pragma: no cover - older torch
        return
    for name in FUNCTIONAL:
        if hasattr(fc, name):
            setattr(fc, name, forbid(f"dist._functional_collectives.{name}", getattr(fc, name)))


def make_input(case: dict[str, Any], rank: int, device: str) -> Any:
    """This rank's (contiguous) input values; "big" int64 values sum to about 2**62."""
    import torch

    gen = torch.Generator().manual_seed(1000 * case["seed"] + rank)
    shape = tuple(case["shape"])
    dtype = getattr(torch, case["dtype"])
    if dtype.is_floating_point:
        x = torch.randn(shape, generator=gen, dtype=dtype)
    else:
        x = torch.randint(-1000, 1000, shape, generator=gen, dtype=dtype)
        if case.get("big"):
            x += 2**62 // len(case.get("members") or range(case["world"]))
    return x.to(device)


def lay_out(x: Any, layout: str | None) -> tuple[Any, Any]:
    """(the tensor handed to the solution, its base storage) for a layout of x's values.

    "transposed": a .t() view of a contiguous tensor; "strided": every other element of a
    buffer whose gaps hold a sentinel that must survive.
    """
    import torch

    if layout == "transposed":
        base = x.t().contiguous()
        return base.t(), base
    if layout == "strided":
        base = torch.full((x.numel(), 2), -7, dtype=x.dtype, device=x.device)
        view = base[:, 0]
        view.copy_(x)
        return view, base
    tensor = x.clone()
    return tensor, tensor


def _user_frame(exc: BaseException, solution: str) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == solution]
    return f" (at {Path(solution).name} line {frames[-1].lineno})" if frames else ""


def _compare(got: Any, expected: Any, count_key: str, first_key: str) -> dict[str, Any]:
    import torch

    if got.is_floating_point():
        tol = {"rtol": 1e-5, "atol": 1e-5} if got.dtype == torch.float32 else {}
        if got.dtype == torch.float64:
            tol = {"rtol": 1e-12, "atol": 1e-12}
        wrong = ~torch.isclose(got, expected, **tol)
    else:
        wrong = got != expected
    result: dict[str, Any] = {count_key: int(wrong.sum())}
    if result[count_key]:
        i = int(wrong.reshape(-1).nonzero()[0])
        result[first_key] = (i, got.reshape(-1)[i].item(), expected.reshape(-1)[i].item())
    return result


def run_case(
    fn: Any, case: dict[str, Any], rank: int, device: str, solution: str, group: Any = None
) -> dict:
    """Run one case on this rank (group: the sub-group, for a case with "members")."""
    import torch
    import torch.distributed as dist

    x = make_input(case, rank, device)
    expected = x.clone()
    with grader_collectives():
        t0 = time.perf_counter()
        dist.all_reduce(expected, group=group)
        baseline = time.perf_counter() - t0
        dist.barrier(group=group)
    COUNTERS.sends = COUNTERS.bytes = 0
    tensor, base = lay_out(x, case.get("layout"))
    untouched = base.clone()
    # another view of the same memory, as a gradient bucket holds its slices: the sum must
    # land there too (a solution that rebinds tensor to new storage leaves it unchanged)
    alias = tensor.as_strided(tensor.size(), tensor.stride(), tensor.storage_offset())
    address = tensor.data_ptr()
    rec: dict[str, Any] = {"ok": False, "error": None, "kind": None}
    t0 = time.perf_counter()
    try:
        out = fn(tensor) if group is None else fn(tensor, group=group)
        if device != "cpu":
            torch.cuda.synchronize()
    except CollectiveUsed as exc:
        rec.update(kind="collective", error=str(exc))
        return rec
    except Exception as exc:  # the user's code failed
        text = re.sub(r"\[[^\]]*\.(cc|cpp|h):\d+\] ", "", f"{type(exc).__name__}: {exc}")
        text = text.splitlines()[0][:300]
        if "Timed out" in text or "timed out" in text:
            kind = "deadlock"
        elif "closed by peer" in text or "reset by peer" in text:
            kind = "peer_closed"  # a consequence: the peer gave up (timed out) or died
        else:
            kind = "exception"
        rec.update(kind=kind, error=text + _user_frame(exc, solution))
        return rec
    rec.update(ok=True, seconds=time.perf_counter() - t0, baseline=baseline)
    rec.update(sends=COUNTERS.sends, bytes=COUNTERS.bytes)
    rec.update(_compare(tensor, expected, "mismatches", "first_bad"))
    rec["unchanged"] = bool(x.numel()) and torch.equal(tensor, x)
    rec["rebound"] = tensor.data_ptr() != address
    if x.numel():
        memory = _compare(alias, expected, "memory_mismatches", "memory_first_bad")
        rec["memory_mismatches"] = memory["memory_mismatches"]
    if case.get("layout") == "strided":
        rec["gaps_changed"] = int((base[:, 1] != untouched[:, 1]).sum())
    if out is None:
        rec["returned"] = "none"
    elif out is tensor:
        rec["returned"] = "input"
    elif isinstance(out, torch.Tensor) and out.shape == tensor.shape:
        rec.update(_compare(out.to(tensor.dtype), expected, "out_mismatches", "out_first_bad"))
        rec["returned"] = "other"
    else:
        shape = f" of shape {list(out.shape)}" if isinstance(out, torch.Tensor) else ""
        rec["returned"] = f"a {type(out).__name__}{shape}"
    rec["digest"] = hashlib.sha256(tensor.cpu().contiguous().numpy().tobytes()).hexdigest()
    return rec


def rank_main(
    rank: int,
    world: int,
    port: int,
    backend: str,
    solution: str,
    cases: list[dict[str, Any]],
    op_timeout: float,
    queue: Any,
    stderr_path: str | None = None,
) -> None:
    """Entry point of one rank (started by the parent with forkserver or spawn).

    The rank's stderr goes to stderr_path, so the parent can quote a native crash.
    """
    if stderr_path:
        fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 2)
        os.close(fd)
    try:
        _rank_main(rank, world, port, backend, solution, cases, op_timeout, queue)
    except BaseException as exc:
        queue.put(("fatal", rank, f"{type(exc).__name__}: {exc}".splitlines()[0][:400]))
    finally:
        queue.close()
        queue.join_thread()
        os._exit(0)  # skip destroy_process_group: it can hang after a timeout


def _rank_main(
    rank: int,
    world: int,
    port: int,
    backend: str,
    solution: str,
    cases: list[dict[str, Any]],
    op_timeout: float,
    queue: Any,
) -> None:
    if backend == "nccl":
        os.environ.setdefault("TORCH_NCCL_BLOCKING_WAIT", "1")  # a hang raises, not aborts
    import torch
    import torch.distributed as dist

    from quizzer.exercises.plugin import SolutionLoadError, load_solution

    device = "cpu"
    if backend == "nccl":
        torch.cuda.set_device(rank)
        device = f"cuda:{rank}"
    store = dist.TCPStore("127.0.0.1", port, world, rank == 0, timeout=timedelta(seconds=60))
    dist.init_process_group(
        backend, store=store, rank=rank, world_size=world, timeout=timedelta(seconds=op_timeout)
    )
    sub = None
    if world > max(SUB_GROUP) and any(case.get("members") for case in cases):
        sub = dist.new_group(SUB_GROUP, timeout=timedelta(seconds=SUB_TIMEOUT_S))
    install_patches()
    try:
        module = load_solution(solution)
    except SolutionLoadError as exc:
        queue.put(("fatal", rank, exc.message))
        return
    fn = getattr(module, "ring_allreduce_", None)
    if not callable(fn):
        queue.put(("fatal", rank, f"{Path(solution).name} defines no ring_allreduce_ function"))
        return
    for index, case in enumerate(cases):
        if case.get("members") and rank not in case["members"]:
            queue.put(("case", rank, index, {"ok": True, "absent": True}))
            continue
        group = sub if case.get("members") else None
        rec = run_case(fn, case, rank, device, solution, group)
        queue.put(("case", rank, index, rec))
        if not _all_ok(rec["ok"], device, group):
            break  # someone failed: the group may be wedged, stop here
    _wait_for_members(store, rank, cases)
    queue.put(("done", rank))


def _wait_for_members(store: Any, rank: int, cases: list[dict[str, Any]]) -> None:
    """Keep a rank outside the sub-group alive (and its connections open) until the
    sub-group's ranks are done: a solution that ignores `group` then times out clearly."""
    if not any(case.get("members") for case in cases):
        return
    if rank in SUB_GROUP:
        store.set(f"sub_done_{rank}", "1")
        return
    with contextlib.suppress(Exception):
        store.wait([f"sub_done_{r}" for r in SUB_GROUP], timedelta(seconds=SUB_TIMEOUT_S + 15))


def _all_ok(ok: bool, device: str, group: Any = None) -> bool:
    import torch
    import torch.distributed as dist

    flag = torch.tensor([0 if ok else 1], device=device)
    try:
        with grader_collectives():
            dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=group)
    except Exception:
        return False
    return int(flag.item()) == 0
