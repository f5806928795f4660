"""Calls of the numba track's kernels: NaN-filled outputs, untouched inputs, the launches
each call made (in the simulator), and failures of the simulated kernel explained."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import cudasim_shim
import numpy as np
import pytest

Fn = Callable[..., Any]


@dataclass
class Launches:
    """(blocks, threads per block) of every kernel launch made from host code."""

    seen: list[tuple[int, int]] = field(default_factory=list)


@contextlib.contextmanager
def recording(simulated: bool) -> Iterator[Launches]:
    """Record the simulator's kernel launches for the duration (nothing on a GPU)."""
    record = Launches()
    if not simulated:
        yield record
        return
    from numba.cuda.simulator import kernel

    original = kernel.FakeCUDAKernel.__call__

    def launch(self: Any, *args: Any) -> Any:
        """The simulator's launch, noting its grid first."""
        if not self._device:
            record.seen.append(
                (cudasim_shim.launch_size(self.grid_dim), cudasim_shim.launch_size(self.block_dim))
            )
        return original(self, *args)

    kernel.FakeCUDAKernel.__call__ = launch
    try:
        yield record
    finally:
        kernel.FakeCUDAKernel.__call__ = original


def explain(exc: BaseException) -> str:
    """A one-line account of an exception raised by the user's kernel."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, IndexError) or "out of bounds" in str(exc):
        return (
            f"out-of-bounds access in the kernel ({text}): guard every column index with "
            "col < D (D need not be a multiple of threads, and may be smaller)"
        )
    return text


@dataclass(frozen=True)
class Run:
    """What one call wrote: host copies of the outputs, and its launches."""

    outputs: dict[str, np.ndarray]
    launches: list[tuple[int, int]]


def run(
    fn: Fn,
    cuda: ModuleType,
    name: str,
    inputs: dict[str, np.ndarray],
    outputs: dict[str, tuple[int, ...]],
    eps: float,
    threads: int,
    simulated: bool,
    context: str,
) -> Run:
    """``fn(*inputs, *outputs, eps, threads)`` on device copies; outputs start as NaN."""
    dev_in = {k: cuda.to_device(v) for k, v in inputs.items()}
    dev_out = {k: cuda.to_device(np.full(s, np.nan, np.float32)) for k, s in outputs.items()}
    failure = None
    with recording(simulated) as launches:
        try:
            fn(*dev_in.values(), *dev_out.values(), eps, threads)
        except NotImplementedError as exc:
            failure = f"{name} is not implemented yet (NotImplementedError: {exc})"
        except Exception as exc:  # the user's kernel failed (in the simulator: with ids)
            failure = f"{name} failed ({context}): {explain(exc)}"
    if failure is not None:
        pytest.fail(failure, pytrace=False)
    cuda.synchronize()
    for key, value in inputs.items():
        if not np.array_equal(dev_in[key].copy_to_host(), value, equal_nan=True):
            pytest.fail(f"{name} modified its input {key} ({context})", pytrace=False)
    got = {k: v.copy_to_host() for k, v in dev_out.items()}
    for key, value in got.items():
        missing = np.argwhere(np.isnan(value))
        if missing.size:
            where = ", ".join(map(str, missing[0]))
            pytest.fail(
                f"{name}: {key}[{where}] was never written ({len(missing)} of {value.size} "
                f"values missing; {context}): the block's threads must cover every column "
                "0 .. D-1 (col = tid, tid + threads, ... while col < D), and one thread per "
                "row must write mean and rstd",
                pytrace=False,
            )
    return Run(got, launches.seen)


def check_one_block_per_row(run_: Run, rows: int, threads: int, name: str, context: str) -> None:
    """Every launch: one block per row of x, `threads` threads per block."""
    if not run_.launches:
        return
    for blocks, block_threads in run_.launches:
        if blocks != rows or block_threads != threads:
            pytest.fail(
                f"{name} launched {blocks} block(s) of {block_threads} threads for {rows} rows "
                f"with threads={threads} ({context}): the README asks for one block per row "
                f"(kernel[rows, threads]); the block's threads share the row's columns",
                pytrace=False,
            )
