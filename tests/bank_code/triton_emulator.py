"""Just enough of Triton, on the CPU, to run the bank's Triton kernels: `triton.jit`,
`triton.autotune`, `triton.cdiv`, and a `tl` whose blocks are torch tensors.

Each program of the grid runs in turn as plain Python. Pointers are a flat view of a
contiguous torch tensor plus offsets; a load or store outside the tensor in a lane the mask
does not switch off raises IndexError, as it would be a fault (or silent garbage) on a GPU.
Masked-off lanes of a load read `other`, so NaN or junk past the end never leaks in.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

_program: list[int] = [0, 0, 0]


@dataclass(frozen=True)
class Pointer:
    """A base tensor (flat) and element offsets into it."""

    base: torch.Tensor
    offsets: Any = 0

    def __add__(self, other: Any) -> Pointer:
        return Pointer(self.base, self.offsets + other)

    __radd__ = __add__

    @property
    def dtype(self) -> types.SimpleNamespace:
        """`ptr.dtype.element_ty`, as kernels write it."""
        return types.SimpleNamespace(element_ty=self.base.dtype)


def _index(ptr: Pointer, mask: Any) -> tuple[torch.Tensor, torch.Tensor]:
    offsets = torch.as_tensor(ptr.offsets, dtype=torch.int64)
    live = torch.ones_like(offsets, dtype=torch.bool) if mask is None else torch.as_tensor(mask)
    offsets, live = torch.broadcast_tensors(offsets, live)
    bad = live & ((offsets < 0) | (offsets >= ptr.base.numel()))
    if bad.any():
        raise IndexError(
            f"unmasked access outside the tensor at offsets {offsets[bad][:4].tolist()}"
        )
    return offsets.clamp(0, max(ptr.base.numel() - 1, 0)), live


def _load(ptr: Pointer, mask: Any = None, other: float = 0.0) -> torch.Tensor:
    offsets, live = _index(ptr, mask)
    if ptr.base.numel() == 0:
        return torch.full(offsets.shape, other, dtype=ptr.base.dtype)
    values = ptr.base[offsets]
    return torch.where(live, values, torch.tensor(other, dtype=values.dtype))


def _store(ptr: Pointer, value: Any, mask: Any = None) -> None:
    offsets, live = _index(ptr, mask)
    value = torch.as_tensor(value).to(ptr.base.dtype).expand(offsets.shape)
    ptr.base[offsets[live]] = value[live]


def _full(shape: Sequence[int], value: float, dtype: torch.dtype) -> torch.Tensor:
    return torch.full(tuple(shape), value, dtype=dtype)


tl = types.SimpleNamespace(
    constexpr=int,
    float32=torch.float32,
    float16=torch.float16,
    int32=torch.int32,
    int64=torch.int64,
    program_id=lambda axis: _program[axis],
    arange=lambda start, end: torch.arange(start, end),
    load=_load,
    store=_store,
    zeros=lambda shape, dtype: _full(shape, 0.0, dtype),
    full=_full,
    dot=lambda a, b: a.float() @ b.float(),
    trans=lambda x: x.T,
    sum=lambda x, axis: x.sum(axis),
    max=lambda x, axis: x.amax(axis),
    maximum=torch.maximum,
    exp=torch.exp,
    exp2=torch.exp2,
    where=lambda cond, a, b: torch.where(cond, torch.as_tensor(a), torch.as_tensor(b)),
    cdiv=lambda a, b: -(-int(a) // int(b)),
)


class Kernel:
    """A `@triton.jit` function: `kernel[grid](*args, **meta)` runs every program."""

    def __init__(self, fn: Callable[..., None], configs: Sequence[Config] = ()) -> None:
        self.fn, self.configs = fn, tuple(configs)

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        def launch(*args: Any, **meta: Any) -> None:
            if self.configs:
                meta = {**self.configs[0].kwargs, **meta}  # no tuning: the first config
            shape = grid(meta) if callable(grid) else grid
            args = tuple(Pointer(a.view(-1)) if isinstance(a, torch.Tensor) else a for a in args)
            for pid in _programs(tuple(shape)):
                _program[: len(pid)] = pid
                self.fn(*args, **meta)

        return launch


def _programs(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    total = math.prod(shape)
    out = []
    for flat in range(total):
        pid, rest = [], flat
        for size in shape:
            pid.append(rest % size)
            rest //= size
        out.append(tuple(pid))
    return out


@dataclass(frozen=True)
class Config:
    """`triton.Config`: meta-parameters and launch options (the options are ignored)."""

    kwargs: dict[str, Any]
    num_warps: int = 4
    num_stages: int = 2


def _autotune(configs: Sequence[Config], key: Sequence[str]) -> Callable[[Kernel], Kernel]:
    return lambda kernel: Kernel(kernel.fn, configs)


triton = types.SimpleNamespace(
    jit=Kernel, autotune=_autotune, Config=Config, cdiv=lambda a, b: -(-int(a) // int(b))
)
