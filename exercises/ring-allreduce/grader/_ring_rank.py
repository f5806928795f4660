"""What each rank runs: join the group, forbid collectives, count bytes sent, run the cases.

Each rank puts plain dicts on a queue: ("case", rank, index, record), then ("done", rank)
or ("fatal", rank, message). The parent (_ring_group.py) turns them into a report.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import traceback
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

DEADLOCK_HINT = "every rank blocks in send: use isend/irecv or alternate order"

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

    def forbid(pg_name: str, public: str, original: Any) -> Any:
        def patched(*args: Any, **kwargs: Any) -> Any:
            if COUNTERS.allow:
                return original(*args, **kwargs)
            raise CollectiveUsed(
                f"ring_allreduce_ called the collective dist.{public} ({pg_name}); "
                "point-to-point only: use send/recv/isend/irecv/batch_isend_irecv"
            )

        return patched

    for pg_name, public in COLLECTIVES.items():
        original = ProcessGroup.__dict__.get(pg_name)
        if original is not None:
            setattr(ProcessGroup, pg_name, forbid(pg_name, public, original))

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
            setattr(fc, name, forbid(name, f"_functional_collectives.{name}", getattr(fc, name)))


def make_input(case: dict[str, Any], rank: int, device: str) -> Any:
    import torch

    gen = torch.Generator().manual_seed(1000 * case["seed"] + rank)
    shape = tuple(case["shape"])
    dtype = getattr(torch, case["dtype"])
    if dtype.is_floating_point:
        x = torch.randn(shape, generator=gen, dtype=dtype)
    else:
        x = torch.randint(-1000, 1000, shape, generator=gen, dtype=dtype)
    return x.to(device)


def _user_frame(exc: BaseException, solution: str) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == solution]
    return f" (at {Path(solution).name} line {frames[-1].lineno})" if frames else ""


def _compare(got: Any, expected: Any, count_key: str, first_key: str) -> dict[str, Any]:
    import torch

    if got.is_floating_point():
        tol = {"rtol": 1e-5, "atol": 1e-5} if got.dtype == torch.float32 else {}
        wrong = ~torch.isclose(got, expected, **tol)
    else:
        wrong = got != expected
    result: dict[str, Any] = {count_key: int(wrong.sum())}
    if result[count_key]:
        i = int(wrong.reshape(-1).nonzero()[0])
        result[first_key] = (i, got.reshape(-1)[i].item(), expected.reshape(-1)[i].item())
    return result


def run_case(fn: Any, case: dict[str, Any], rank: int, device: str, solution: str) -> dict:
    import torch
    import torch.distributed as dist

    x = make_input(case, rank, device)
    expected = x.clone()
    with grader_collectives():
        t0 = time.perf_counter()
        dist.all_reduce(expected)
        baseline = time.perf_counter() - t0
        dist.barrier()
    COUNTERS.sends = COUNTERS.bytes = 0
    tensor = x.clone()
    rec: dict[str, Any] = {"ok": False, "error": None, "kind": None}
    t0 = time.perf_counter()
    try:
        out = fn(tensor)
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
    if out is None:
        rec["returned"] = "none"
    elif out is tensor:
        rec["returned"] = "input"
    elif isinstance(out, torch.Tensor) and out.shape == tensor.shape:
        rec.update(_compare(out.to(tensor.dtype), expected, "out_mismatches", "out_first_bad"))
        rec["returned"] = "other"
    else:
        rec["returned"] = f"a {type(out).__name__}"
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
) -> None:
    """Entry point of one rank (started by the parent with forkserver or spawn)."""
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
        rec = run_case(fn, case, rank, device, solution)
        queue.put(("case", rank, index, rec))
        if not _all_ok(rec["ok"], device):
            break  # someone failed: the group may be wedged, stop here
    queue.put(("done", rank))


def _all_ok(ok: bool, device: str) -> bool:
    import torch
    import torch.distributed as dist

    flag = torch.tensor([0 if ok else 1], device=device)
    try:
        with grader_collectives():
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    except Exception:
        return False
    return int(flag.item()) == 0
