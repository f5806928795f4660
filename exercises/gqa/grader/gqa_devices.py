"""Which tensors of a forward would sit on another device than the input.

A mask built with ``torch.ones(T, S)`` (no ``device=``) is created on the default device,
the CPU, whatever the input's device: on a CPU machine nothing goes wrong, on a GPU the
first operation that combines it with the scores raises. :class:`HostTensors` follows, while
the user's forward runs, every tensor a factory creates without a device or on a device
other than the input's (``device="cpu"`` with the input elsewhere), and everything computed
from such tensors alone, and records the first operation that combines one with a tensor on
the input's device, as a GPU would refuse it. So a CPU run fails the device-less mask too,
and a run with the input on the ``meta`` device fails a mask made with ``device="cpu"``.

What a GPU accepts is accepted here: a one-element (0-dimensional) CPU tensor mixed with GPU
tensors, indexing a GPU tensor with CPU indices, copying across devices, and a tensor moved
with ``.to(device)``, ``.to(other)``, ``.type_as(other)`` or ``.cuda()`` first.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

_TAG = "_quizzer_created_without_device"
# factories that put their result on the default device unless given device=
_FACTORIES: set[Callable[..., Any]] = {
    torch.arange,
    torch.as_tensor,
    torch.empty,
    torch.eye,
    torch.full,
    torch.linspace,
    torch.logspace,
    torch.ones,
    torch.rand,
    torch.randint,
    torch.randn,
    torch.randperm,
    torch.range,
    torch.tensor,
    torch.tril_indices,
    torch.triu_indices,
    torch.zeros,
}
# a GPU tensor accepts CPU tensors here: indices, and the source of a copy
_MIXING_ALLOWED: set[Callable[..., Any]] = {
    torch.Tensor.__getitem__,
    torch.Tensor.__setitem__,
    torch.Tensor.copy_,
    torch.Tensor.index_put_,
    torch.Tensor.index_put,
}


@dataclass(frozen=True)
class Origin:
    """Where a tensor off the input's device was made, and how it got there."""

    created: str  # e.g. "torch.ones at gqa.py line 42"
    placed: str | None  # None: made without device=; else the fixed device, e.g. "cpu"


@dataclass(frozen=True)
class Mix:
    """The first operation that combined a tensor off the input's device with its tensors."""

    origin: Origin
    operation: str  # e.g. "masked_fill at gqa.py line 44"
    shape: tuple[int, ...]


def _name(func: Callable[..., Any]) -> str:
    return getattr(func, "__name__", None) or str(func)


def _where(user_file: str) -> str:
    """`` at FILE line N`` for the innermost frame of the user's file, else ""."""
    for frame in reversed(traceback.extract_stack()):
        if frame.filename == user_file:
            return f" at {user_file.rsplit('/', 1)[-1]} line {frame.lineno}"
    return ""


def _tensors(*trees: Any) -> list[torch.Tensor]:
    leaves: list[Any] = []
    for tree in trees:
        leaves += tree_flatten(tree)[0]
    return [t for t in leaves if isinstance(t, torch.Tensor)]


def _device_target(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """``.to(...)`` names a device (or a tensor to follow) rather than only a dtype."""
    if kwargs.get("device") is not None or isinstance(kwargs.get("other"), torch.Tensor):
        return True
    return any(isinstance(a, (torch.device, str, int, torch.Tensor)) for a in args[1:])


def _off(result: Any, device: torch.device) -> bool:
    """Some tensor of ``result`` lies on another device than ``device``."""
    return any(t.device != device for t in _tensors(result))


class HostTensors(TorchFunctionMode):
    """Active around the user's forward on ``device`` (the input's); ``mix`` is the first
    mixed operation, or None."""

    def __init__(self, user_file: str, device: torch.device) -> None:
        super().__init__()
        self.user_file = user_file
        self.device = device
        self.mix: Mix | None = None

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        if func in _FACTORIES:
            result = func(*args, **kwargs)
            if not _tensors(args):  # as_tensor(t) and the like follow their argument
                created = f"torch.{_name(func)}{_where(self.user_file)}"
                if kwargs.get("device") is None:
                    self._tag(result, Origin(created, None))
                elif _off(result, self.device):
                    self._tag(result, Origin(created, str(kwargs["device"])))
            return result
        inputs = _tensors(args, kwargs)
        host = [t for t in inputs if getattr(t, _TAG, None) and t.dim() > 0]
        on_device = [t for t in inputs if not getattr(t, _TAG, None) and t.dim() > 0]
        if func in (torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.cpu, torch.Tensor.type_as):
            return self._moved(func, args, kwargs)
        if host and on_device and func not in _MIXING_ALLOWED and self.mix is None:
            self.mix = Mix(
                origin=getattr(host[0], _TAG),
                operation=f"{_name(func)}{_where(self.user_file)}",
                shape=tuple(host[0].shape),
            )
        result = func(*args, **kwargs)
        if host and not on_device and kwargs.get("device") is None:  # e.g. zeros_like(mask)
            self._tag(result, getattr(host[0], _TAG))
        return result

    def _moved(
        self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """``.to`` / ``.cuda`` / ``.cpu`` / ``.type_as``: a tensor moved to the input's device
        is on it; one moved elsewhere is not; one only cast to another dtype stays where it
        was."""
        source = args[0]
        result = func(*args, **kwargs)
        follows = _tensors(args[1:], kwargs)
        moved = func in (torch.Tensor.cuda, torch.Tensor.cpu) or _device_target(args, kwargs)
        if follows and getattr(follows[0], _TAG, None):
            moved = False  # follows another device-less tensor
        if not moved:
            tag = getattr(source, _TAG, None)
            if tag:
                self._tag(result, tag)
            return result
        if result is source and getattr(source, _TAG, None):
            result = result.view_as(result)  # a fresh object: the original keeps its tag
        if _off(result, self.device) and not follows:
            moved_to = str(_tensors(result)[0].device)
            self._tag(result, Origin(f"Tensor.{_name(func)}{_where(self.user_file)}", moved_to))
        return result

    @staticmethod
    def _tag(result: Any, origin: Origin) -> None:
        for t in _tensors(result):
            setattr(t, _TAG, origin)
