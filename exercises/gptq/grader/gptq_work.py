"""Counts the work a call does, independent of the machine: elements written by tensor ops
and host syncs (``.item()``, ``float(t)``, ``bool(t)``), through a TorchDispatchMode."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

SYNC = torch.ops.aten._local_scalar_dense.default


@dataclass
class Work:
    """What one call cost: elements written by tensor ops (views excluded) and host syncs."""

    written: int = 0
    syncs: int = 0


class CountWork(TorchDispatchMode):
    """Adds to ``work`` every op's freshly written elements (in-place results count, views do
    not) and every device-to-host scalar read."""

    def __init__(self) -> None:
        super().__init__()
        self.work = Work()

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # nothing runs compiled under this mode; without this torch wraps __torch_dispatch__
        # to disable compilation, which imports torch._dynamo (0.8 s) at the first op
        return False

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if func is SYNC:
            self.work.syncs += 1
            return out
        returns = func._schema.returns
        aliased = any(r.alias_info is not None and not r.alias_info.is_write for r in returns)
        if not aliased:
            self.work.written += sum(
                t.numel() for t in tree_leaves(out) if isinstance(t, torch.Tensor)
            )
        return out
