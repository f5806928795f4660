"""What the user's file may not use: ready-made LRU machinery, found by reading its syntax tree.

Not allowed: ``collections.OrderedDict``, ``functools.lru_cache`` / ``functools.cache``, and
third-party cache packages. Aliases (``import functools as ft``), attribute access
(``collections.OrderedDict``), star imports and names looked up by string
(``getattr(collections, "OrderedDict")``) count too.

Also not allowed, because they cost O(log n) per call where O(1) is asked: a heap
(``heapq``) or a sorted sequence (``bisect``, ``sortedcontainers``) for the recency order.
"""

from __future__ import annotations

import ast

FORBIDDEN_NAMES = {"OrderedDict", "lru_cache"}
FUNCTOOLS_CACHES = {"lru_cache", "cache"}
CACHE_PACKAGES = {
    "boltons",
    "cachebox",
    "cachelib",
    "cacheout",
    "cachetools",
    "diskcache",
    "lru",
    "lru_dict",
    "lrucache",
    "methodtools",
    "pylru",
    "repoze",
}
LOG_N_MODULES = {"bisect", "heapq", "sortedcontainers"}


def _functools_aliases(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name == "functools"}
    return names


def _import_problems(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [
            f"imports the cache package `{a.name}`"
            for a in node.names
            if a.name.split(".")[0] in CACHE_PACKAGES
        ]
    module = node.module or ""
    names = {a.name for a in node.names}
    if module.split(".")[0] in CACHE_PACKAGES:
        return [f"imports from the cache package `{module}`"]
    if module == "collections" and names & {"OrderedDict", "*"}:
        return ["imports OrderedDict from collections"]
    if module == "functools" and names & (FUNCTOOLS_CACHES | {"*"}):
        found = sorted(names & (FUNCTOOLS_CACHES | {"*"}))
        return [f"imports {', '.join(found)} from functools"]
    return []


def forbidden_uses(source: str) -> list[str]:
    """``line N: what`` for every use that is not allowed (empty when the file is clean).

    A file that does not parse gives no findings: importing it reports the syntax error.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    functools_names = _functools_aliases(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found += [(line, text) for text in _import_problems(node)]
        elif isinstance(node, ast.Attribute):
            base = node.value.id if isinstance(node.value, ast.Name) else None
            if node.attr in FORBIDDEN_NAMES:
                found.append((line, f"uses `.{node.attr}`"))
            elif node.attr == "cache" and base in functools_names:
                found.append((line, f"uses `{base}.cache`"))
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            found.append((line, f"uses `{node.id}`"))
        elif isinstance(node, ast.Constant) and node.value in FORBIDDEN_NAMES:
            found.append((line, f"looks up {node.value!r} by name"))
    return [f"line {line}: {text}" for line, text in sorted(set(found))]


def log_n_uses(source: str) -> list[str]:
    """``line N: what`` for every import of a heap or sorted-sequence module (O(log n)).

    Names looked up by string count too (``importlib.import_module("heapq")``).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            names = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [(node.module or "").split(".")[0]]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value]
        else:
            continue
        found |= {(line, f"uses `{name}`") for name in names if name in LOG_N_MODULES}
    return [f"line {line}: {text}" for line, text in sorted(found)]
