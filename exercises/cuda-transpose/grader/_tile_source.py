"""Source checks of a CUDA C++ transpose's shared-memory tile (no GPU needed).

:func:`tiles` finds every ``__shared__`` array of 4-byte elements and decides, from its
declared shape and the way it is indexed, whether reading a column of it is free of bank
conflicts (32 banks of 4 bytes; word ``w`` is in bank ``w % 32``):

- a 2-D tile ``[R][C]``: a column has a stride of ``C`` words, so it touches
  ``32 / gcd(C, 32)`` banks and the worst bank is hit ``gcd(C, 32)`` times: free when ``C``
  is odd (``TILE + 1``), unless every column index is XOR-swizzled (``tile[r][c ^ r]``);
- a 1-D tile: taken as free when its size is ``t * (t + 1)`` with ``t + 1`` odd or is
  written with a ``+ 1`` (a row pitch of ``TILE + 1``), or when every index uses an XOR.

Sizes are evaluated with the integer constants the file defines (``#define N 32``,
``constexpr int N = 32;``, ``const int P = N + 1;``).
"""

from __future__ import annotations

import ast
import math
import operator
import re
from dataclasses import dataclass

import cu_source

BANKS = 32
_CONSTANT = re.compile(
    r"#\s*define\s+([A-Za-z_]\w*)[ \t]+([^\n]+)$"
    r"|\b(?:static\s+)?(?:constexpr|const)\s+(?:unsigned\s+|signed\s+)?(?:int|long|size_t|"
    r"unsigned|int32_t|uint32_t)?\s*([A-Za-z_]\w*)\s*=\s*([^;{}]+);",
    re.M,
)
_SHARED = re.compile(
    r"__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?(?:volatile\s+)?"
    r"(float|int|unsigned|unsigned\s+int|uint32_t|int32_t)\s+([A-Za-z_]\w*)\s*((?:\[[^\];]*\]\s*)+);"
)
_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.floordiv,
}


@dataclass(frozen=True)
class Tile:
    """A ``__shared__`` array of 4-byte elements and what its layout does to a column."""

    name: str
    line: int
    declaration: str  # e.g. "tile[TILE][TILE + 1]"
    dims: tuple[int, ...] | None  # None when a size could not be evaluated
    swizzled: bool  # every last-dimension index uses ^
    degree: int  # worst bank conflict of a column read, 1 = conflict-free (0 = unknown)
    dynamic: bool = False  # extern __shared__ ... [] (its size set at launch)
    cause: str = ""  # what in the indexing makes the conflict, when the layout alone does not

    def verdict(self) -> str | None:
        """Why the tile has bank conflicts (or is not a static array), or None."""
        if self.dynamic:
            return (
                f"{self.declaration} is dynamic shared memory (extern, sized at launch): declare "
                "the tile as a static __shared__ float array whose size uses literals or "
                "constants, e.g. __shared__ float tile[TILE][TILE + 1] (README, CUDA C++ track)"
            )
        if self.degree <= 1:
            return None
        if self.cause:
            return (
                f"__shared__ float {self.declaration}: {self.cause}, so reading a column of "
                f"it is a {self.degree}-way bank conflict"
            )
        dims = self.dims or ()
        shown = f"__shared__ float {self.declaration}"
        if len(dims) == 2 and dims[0] % 2 == 1 and dims[1] % 2 == 0:
            return (
                f"{shown} ({dims[0]} x {dims[1]}) is padded on the wrong dimension: its rows "
                f"are still {dims[1]} floats long, so reading a column of it is a "
                f"{self.degree}-way bank conflict; pad the row length (the last dimension): "
                "tile[TILE][TILE + 1]"
            )
        if len(dims) == 2:
            return (
                f"{shown} has rows of {dims[1]} floats: reading a column of it (the write-back "
                f"of a transpose) hits one bank {self.degree} times, a {self.degree}-way bank "
                "conflict; declare tile[TILE][TILE + 1] or XOR-swizzle the column "
                "(tile[r][c ^ r] when storing and reading)"
            )
        return (
            f"{shown}: a flat tile must use a row pitch of TILE + 1 floats (index "
            "r * (TILE + 1) + c) or an XOR swizzle, else reading a column of it is a "
            "32-way bank conflict"
        )


def constants(text: str) -> dict[str, int]:
    """Integer constants defined in the (comment-free) source, in order (a constant may use
    earlier ones: ``constexpr int PITCH = TILE + 1;``)."""
    found: dict[str, int] = {}
    for m in _CONSTANT.finditer(text):
        name, expression = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        value = evaluate(expression, found)
        if value is not None:
            found[name] = value
    return found


def evaluate(expression: str, names: dict[str, int]) -> int | None:
    """An integer expression of literals, known names, + - * /, or None."""
    cleaned = re.sub(r"(\d+)[uUlL]+\b", r"\1", expression.strip())
    try:
        tree = ast.parse(cleaned, mode="eval")
    except SyntaxError:
        return None

    def walk(node: ast.AST) -> int | None:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return names.get(node.id)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            left, right = walk(node.left), walk(node.right)
            if left is None or right is None or (right == 0 and isinstance(node.op, ast.Div)):
                return None
            return _OPS[type(node.op)](left, right)
        return None

    return walk(tree)


def _pitch_plus_one(size: int) -> bool:
    """size == t * (t + 1) for some even t (a flat tile of t rows of t + 1 words)."""
    t = math.isqrt(size)
    return t % 2 == 0 and t * (t + 1) == size


def _subscripts(text: str, start: int) -> list[str]:
    """The bracketed subscripts right after position ``start`` (nested brackets kept)."""
    found = []
    i = start
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text) or text[i] != "[":
            return found
        depth, j = 0, i
        while j < len(text):
            if text[j] == "[":
                depth += 1
            elif text[j] == "]":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        found.append(text[i + 1 : j])
        i = j + 1


def _uses(text: str, name: str, declaration_end: int) -> list[list[str]]:
    """The subscripts of every use of array ``name`` after its declaration."""
    uses = []
    for m in re.finditer(rf"\b{re.escape(name)}\b", text):
        if m.start() < declaration_end:
            continue
        subs = _subscripts(text, m.end())
        if subs:
            uses.append(subs)
    return uses


def _terms(text: str, ops: str) -> list[str]:
    """``text`` split at the operators ``ops`` outside parentheses and brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch in ops and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


def _row_pitches(index: str, names: dict[str, int]) -> list[int]:
    """The constant factors of the products in a flat index (``r * TILE + c`` -> [32])."""
    pitches = []
    for term in _terms(index, "+-"):
        factors = _terms(term, "*")
        if len(factors) < 2:
            continue
        for factor in factors:
            value = evaluate(factor, names)
            if value is not None and value > 1:
                pitches.append(value)
    return pitches


_MASKED_KEY = re.compile(r"\^\s*\(?\s*[^()^]*?(&|%)\s*(\w+)\s*\)?")


def _swizzle_banks(index: str, names: dict[str, int]) -> int | None:
    """How many banks an XOR key masked to a few bits can reach (``c ^ (r & 7)`` -> 8), or
    None when the key is not masked."""
    m = _MASKED_KEY.search(index)
    if m is None:
        return None
    value = evaluate(m.group(2), names)
    if value is None:
        return None
    return value + 1 if m.group(1) == "&" else value


def tiles(source: str) -> list[Tile]:
    """Every ``__shared__`` array of 4-byte elements, with its bank-conflict degree."""
    text = cu_source.strip(source)
    names = constants(text)
    found = []
    for m in _SHARED.finditer(text):
        name = m.group(2)
        sizes = _subscripts(m.group(3), 0)
        dims = tuple(evaluate(s, names) for s in sizes)
        known = None if any(d is None for d in dims) else tuple(int(d) for d in dims)  # type: ignore[arg-type]
        uses = [u for u in _uses(text, name, m.end()) if len(u) == len(sizes)]
        swizzled = bool(uses) and all("^" in u[-1] for u in uses)
        cause = ""
        reach = [b for u in uses if (b := _swizzle_banks(u[-1], names)) is not None]
        pitches = [
            p for u in uses if len(sizes) == 1 for p in _row_pitches(u[0], names) if p % 2 == 0
        ]
        if swizzled and reach and min(reach) < BANKS:
            degree = BANKS // max(1, min(reach))
            cause = (
                f"its XOR key is masked to {min(reach)} values, so a column spreads over "
                f"{min(reach)} of the 32 banks; XOR with the whole row index (tile[r][c ^ r])"
            )
        elif swizzled:
            degree = 1
        elif pitches:
            degree = math.gcd(pitches[0], BANKS)
            cause = (
                f"it is indexed with a row pitch of {pitches[0]} words (r * {pitches[0]} + c), "
                "whatever its declared size; index it r * (TILE + 1) + c"
            )
        elif known is not None and len(known) >= 2:
            degree = math.gcd(known[-1], BANKS)
        elif len(sizes) == 1:
            padded = re.search(r"\+\s*1\b", m.group(3)) or (known and _pitch_plus_one(known[0]))
            degree = 1 if padded else BANKS
        else:
            degree = 0
        line = text.count("\n", 0, m.start()) + 1
        declaration = f"{name}{''.join(f'[{s.strip()}]' for s in sizes)}"
        dynamic = not any(s.strip() for s in sizes) or bool(
            re.search(r"\bextern\s+$", text[max(0, m.start() - 20) : m.start()])
        )
        found.append(Tile(name, line, declaration, known, swizzled, degree, dynamic, cause))
    return found
