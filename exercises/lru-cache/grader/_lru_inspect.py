"""Run-time looks inside the user's cache: ready-made LRU machinery reachable from the
instance or the module, and memory that keeps growing with the number of calls."""

from __future__ import annotations

import contextlib
import gc
import tracemalloc
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from types import CellType, FunctionType, MethodType, ModuleType
from typing import Any

WALK_LIMIT = 50_000  # objects visited at most
SKIPPED_NAMES = {"__builtins__", "__loader__", "__spec__", "__dict__", "__weakref__"}


def _is_lru_wrapper(obj: Any) -> bool:
    return type(obj).__name__ == "_lru_cache_wrapper"


def _finding(path: str, obj: Any) -> str | None:
    if isinstance(obj, type) and issubclass(obj, OrderedDict):
        return f"{path} is the class {obj.__module__}.{obj.__qualname__}"
    if isinstance(obj, OrderedDict):
        return f"{path} is an OrderedDict"
    if _is_lru_wrapper(obj):
        return f"{path} is wrapped in functools.lru_cache"
    return None


def _items(obj: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(obj, dict):
        for key, value in list(obj.items()):
            if key not in SKIPPED_NAMES:
                yield f"{path}[{key!r}]", value
        if callable(getattr(obj, "default_factory", None)):
            yield f"{path}.default_factory", obj.default_factory
    elif isinstance(obj, (list, tuple, deque)):
        yield from ((f"{path}[{i}]", item) for i, item in enumerate(obj))
    elif isinstance(obj, (set, frozenset)):
        yield from ((f"{path} (an element)", item) for item in list(obj))


def _attributes(obj: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(getattr(obj, "__dict__", None), dict):
        for name, value in list(vars(obj).items()):
            if name not in SKIPPED_NAMES:
                yield f"{path}.{name}", value
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in SKIPPED_NAMES and hasattr(obj, name):
                yield f"{path}.{name}", getattr(obj, name)


def _function_parts(obj: FunctionType, path: str) -> Iterator[tuple[str, Any]]:
    yield from ((f"{path} (closure)", cell) for cell in obj.__closure__ or ())
    yield from ((f"{path} (default)", value) for value in obj.__defaults__ or ())
    yield from ((f"{path} (default)", value) for value in (obj.__kwdefaults__ or {}).values())


def _children(obj: Any, path: str, module: str) -> Iterator[tuple[str, Any]]:
    """What ``obj`` refers to, named for a message. Modules, and classes and functions
    defined elsewhere, are not entered: they are not the user's code."""
    if isinstance(obj, (ModuleType, str, bytes, int, float, complex)) or obj is None:
        return
    if isinstance(obj, type):
        if obj.__module__ == module:
            items = list(vars(obj).items())
            yield from ((f"{obj.__qualname__}.{k}", v) for k, v in items if k not in SKIPPED_NAMES)
    elif isinstance(obj, FunctionType):
        if obj.__module__ == module:
            yield from _function_parts(obj, path)
    elif isinstance(obj, CellType):
        with contextlib.suppress(ValueError):  # an empty cell has no contents
            yield path, obj.cell_contents
    elif isinstance(obj, MethodType):
        yield from ((path, obj.__func__), (f"{path}.__self__", obj.__self__))
    else:
        yield from _items(obj, path)
        yield from _attributes(obj, path)


def ready_made_parts(cache: Any, module: ModuleType) -> list[str]:
    """Where an OrderedDict (instance or class) or an lru_cache wrapper can be reached from
    ``cache`` or from the user's module (its globals, classes and functions)."""
    name = module.__name__
    todo: deque[tuple[str, Any]] = deque([("self", cache)])
    todo += [(k, v) for k, v in vars(module).items() if k not in SKIPPED_NAMES]
    seen: set[int] = set()
    found: list[str] = []
    while todo and len(seen) < WALK_LIMIT:
        path, obj = todo.popleft()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        finding = _finding(path, obj)
        if finding:
            found.append(finding)
            continue
        todo += _children(obj, path, name)
    return found


def retained_growth(warm: Callable[[], None], measured: Callable[[], None]) -> int:
    """Bytes still held after ``measured`` ran that were not held after ``warm`` ran
    (everything the process allocated and kept in between, traced with tracemalloc)."""
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        warm()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        measured()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        if not was_tracing:
            tracemalloc.stop()
