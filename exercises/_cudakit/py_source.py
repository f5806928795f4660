"""Source check of a numba.cuda kernel: barriers under thread-dependent branches.

Every thread of a block must reach each ``cuda.syncthreads()``. In the simulator a barrier
that only some threads reach is often noticed only indirectly: the threads that skipped it
run on and touch shared memory, and the race detector speaks first. This module reads the
kernel's module and reports each ``cuda.syncthreads()`` (or call of a function of the module
that contains one) inside an ``if`` or ``while`` whose condition depends on the thread: it
mentions ``cuda.threadIdx``, ``cuda.grid``, ``cuda.laneid`` or a name assigned from them
(``tid``, ``row, col = cuda.grid(2)``, a loop variable over ``range(tid, n, stride)``).
Conditions on block-uniform values (``cuda.blockDim.x``, a step that halves, a block id)
are fine. ``for`` loops are not reported: a thread-dependent start with a uniform trip
count (``range(ty, 32, 8)``) is common and correct.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

_SEED_ATTRS = {"threadIdx", "laneid"}
_SEED_CALLS = {"grid"}
_BARRIERS = {"syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or"}


@dataclass(frozen=True)
class Finding:
    """A barrier that only the threads taking a branch reach."""

    function: str
    line: int
    barrier: str  # "cuda.syncthreads()" or "block_sum()"
    statement: str  # e.g. "if tid < step"


def _is_seed(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute) and node.attr in _SEED_ATTRS:
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in _SEED_CALLS
    return False


def _uses(node: ast.AST, tainted: set[str]) -> bool:
    return any(_is_seed(n) or (isinstance(n, ast.Name) and n.id in tainted) for n in ast.walk(node))


def _targets(node: ast.AST) -> list[str]:
    """The names bound by an assignment target; a store into an array element binds none (a
    value read back from shared memory after a barrier is the same for every thread)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [name for element in node.elts for name in _targets(element)]
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    return []


def _own_nodes(function: ast.FunctionDef) -> list[ast.AST]:
    """The nodes of ``function`` outside nested function definitions."""
    found, stack = [], list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _tainted(function: ast.FunctionDef) -> set[str]:
    """Names assigned, directly or through others, from the thread's index."""
    flows: list[tuple[list[str], ast.AST]] = []
    for node in _own_nodes(function):
        if isinstance(node, ast.Assign):
            flows.append(([t for target in node.targets for t in _targets(target)], node.value))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
            if node.value is not None:
                flows.append((_targets(node.target), node.value))
        elif isinstance(node, ast.For):
            flows.append((_targets(node.target), node.iter))
    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False
        for names, value in flows:
            if set(names) - tainted and _uses(value, tainted):
                tainted |= set(names)
                changed = True
    return tainted


def _barrier_name(call: ast.Call, barrier_functions: set[str]) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _BARRIERS:
        return f"cuda.{func.attr}()"
    if isinstance(func, ast.Name) and func.id in _BARRIERS:
        return f"{func.id}()"
    if isinstance(func, ast.Name) and func.id in barrier_functions:
        return f"{func.id}() (it calls cuda.syncthreads())"
    return None


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def _barrier_functions(functions: dict[str, ast.FunctionDef]) -> set[str]:
    """Functions of the module that contain a barrier, directly or through a call."""
    names: set[str] = set()
    while True:
        grown = {
            name
            for name, fn in functions.items()
            if any(
                isinstance(n, ast.Call) and _barrier_name(n, names) is not None
                for n in _own_nodes(fn)
            )
        }
        if grown == names:
            return names
        names = grown


def divergent_barriers(source: str, kernel: str | None = None) -> list[Finding]:
    """Barriers under a thread-dependent ``if`` or ``while`` in ``source``: in ``kernel``
    and the functions of the module it calls, or in every function when ``kernel`` is None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    functions = _functions(tree)
    barrier_functions = _barrier_functions(functions)
    names = set(functions) if kernel is None else _reachable(kernel, functions)
    findings = []
    for name in sorted(names, key=lambda n: functions[n].lineno):
        findings.extend(_findings(functions[name], barrier_functions))
    return findings


def _reachable(kernel: str, functions: dict[str, ast.FunctionDef]) -> set[str]:
    seen, todo = set(), [kernel]
    while todo:
        name = todo.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        todo.extend(
            n.func.id
            for n in _own_nodes(functions[name])
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        )
    return seen


def _findings(function: ast.FunctionDef, barrier_functions: set[str]) -> list[Finding]:
    tainted = _tainted(function)
    found: list[Finding] = []

    def visit(body: list[ast.stmt], branch: str | None) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, (ast.If, ast.While)):
                keyword = "if" if isinstance(stmt, ast.If) else "while"
                inner = branch
                if inner is None and _uses(stmt.test, tainted):
                    inner = f"{keyword} {ast.unparse(stmt.test)}"
                _calls(stmt.test, branch)
                visit(stmt.body, inner)
                visit(stmt.orelse, inner)
                continue
            for field in ("body", "orelse", "finalbody", "handlers"):
                block = getattr(stmt, field, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.AST):
                    visit(block, branch)  # type: ignore[arg-type]
            for child in ast.iter_child_nodes(stmt):
                if not isinstance(child, ast.stmt) and not isinstance(child, ast.excepthandler):
                    _calls(child, branch)

    def _calls(node: ast.AST, branch: str | None) -> None:
        if branch is None:
            return
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and (name := _barrier_name(n, barrier_functions)):
                found.append(Finding(function.name, n.lineno, name, branch))

    visit(function.body, None)
    return found
