"""Watch every tensor operation a call runs (a TorchDispatchMode): the largest allocation, the
peak of the storage alive at once, the shapes of the matrix products (and which operand came
from the queries), softmax-like reductions and fused attention kernels."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

# ops that PyTorch lowers @, torch.matmul, torch.einsum and F.linear to
PRODUCTS = {"mm", "bmm", "addmm", "baddbmm", "addbmm", "matmul"}
# softmax-like reductions along one dimension: (op name, index of the dim argument)
ROW_REDUCTIONS = {"_softmax": 1, "_log_softmax": 1, "logsumexp": 1, "special_logsumexp": 1}
FUSED = ("scaled_dot_product", "flash_attention", "efficient_attention", "cudnn_attention")


@dataclass
class Allocation:
    elements: int
    op: str
    shape: tuple[int, ...]


@dataclass
class Product:
    """One matrix product: its op, its result's shape, and which side its rows and columns
    come from ("query" for q, o, do and lse, "key" for k and v, None when unknown or mixed)."""

    op: str
    shape: tuple[int, ...]
    rows: str | None = None
    cols: str | None = None


def _key(t: torch.Tensor) -> int | None:
    """The storage a tensor lives in (views share it), or None for an empty one."""
    try:
        storage = t.untyped_storage()
    except (RuntimeError, NotImplementedError):
        return None
    ptr = storage.data_ptr()
    return ptr if ptr and storage.nbytes() else None


@dataclass
class Watch(TorchDispatchMode):
    """Use as ``with Watch(query=(q,), key=(k, v)) as seen: fn(...)``; then read the fields.

    ``query`` and ``key`` name the inputs whose rows are queries and keys: every tensor computed
    from them carries their side, so a product's rows and columns can be told apart. Storage of
    the named inputs is not counted in ``peak``."""

    query: tuple[torch.Tensor, ...] = ()
    key: tuple[torch.Tensor, ...] = ()
    largest: Allocation = field(default_factory=lambda: Allocation(0, "", ()))
    products: list[Product] = field(default_factory=list)
    reductions: list[tuple[str, tuple[int, ...], int]] = field(default_factory=list)
    fused: list[str] = field(default_factory=list)
    # elements of every storage created under the watch and still referenced, at most
    peak: int = 0
    peak_op: str = ""

    def __post_init__(self) -> None:
        super().__init__()
        self._sides: dict[int, frozenset[str]] = {}
        self._external: set[int] = set()
        for side, tensors in (("query", self.query), ("key", self.key)):
            for t in tensors:
                key = _key(t)
                if key is not None:
                    self._sides[key] = self._sides.get(key, frozenset()) | {side}
                    self._external.add(key)
        self._live: dict[int, list[int]] = {}  # storage -> [elements, tensors referencing it]
        self._total = 0

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # the default wraps __torch_dispatch__ in a dynamo guard whose first call imports
        # torch._dynamo (seconds); nothing under this mode is compiled
        return False

    def _side(self, arg: Any) -> str | None:
        if not isinstance(arg, torch.Tensor):
            return None
        sides = self._sides.get(_key(arg) or 0, frozenset())
        return next(iter(sides)) if len(sides) == 1 else None

    def _release(self, key: int) -> None:
        entry = self._live.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] <= 0:
            self._total -= entry[0]
            del self._live[key]

    def _track(self, t: torch.Tensor, key: int, name: str) -> None:
        if key in self._external:
            return
        elements = t.untyped_storage().nbytes() // max(t.element_size(), 1)
        entry = self._live.get(key)
        if entry is None:
            entry = self._live[key] = [0, 0]
        if elements > entry[0]:
            self._total += elements - entry[0]
            entry[0] = elements
        entry[1] += 1
        weakref.finalize(t, self._release, key)
        if self._total > self.peak:
            self.peak, self.peak_op = self._total, name

    def __torch_dispatch__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if any(word in name for word in FUSED):
            self.fused.append(name)
        inputs = [a for a in tree_flatten((args, kwargs or {}))[0] if isinstance(a, torch.Tensor)]
        sides: frozenset[str] = frozenset()
        for a in inputs:
            sides |= self._sides.get(_key(a) or 0, frozenset())
        for t in [out] if isinstance(out, torch.Tensor) else tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and t.element_size() > 0:
                elements = t.untyped_storage().nbytes() // t.element_size()
                if elements > self.largest.elements:
                    self.largest = Allocation(elements, name, tuple(t.shape))
                key = _key(t)
                if key is not None:
                    self._sides[key] = sides  # fresh storage: its inputs' sides; in place: theirs
                    self._track(t, key, name)
        if name in PRODUCTS and isinstance(out, torch.Tensor):
            a, b = (args[1], args[2]) if name in ("addmm", "baddbmm", "addbmm") else args[:2]
            self.products.append(Product(name, tuple(out.shape), self._side(a), self._side(b)))
        if name in ROW_REDUCTIONS and args and isinstance(args[0], torch.Tensor):
            dims = args[ROW_REDUCTIONS[name]] if len(args) > ROW_REDUCTIONS[name] else -1
            for dim in dims if isinstance(dims, (list, tuple)) else [dims]:
                self.reductions.append((name, tuple(args[0].shape), int(args[0].shape[dim])))
        return out
