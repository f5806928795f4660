"""Source checks of a CUDA C++ track that need no GPU (first written for reduce.cu): barriers
under thread-dependent branches, early returns under thread-dependent branches that come
before a barrier, and allocations inside ``solve``.

A barrier (``__syncthreads()``, or a call of a ``__device__`` function that contains one) must
be reached by every thread of the block. This module finds each barrier's enclosing ``if``,
``else``, ``while``, ``for`` and ``do`` statements and reports those whose condition depends
on the thread: it mentions ``threadIdx`` or a variable computed from it (``tid``, ``lane``,
``i = blockIdx.x * blockDim.x + threadIdx.x``, ...), followed through assignments within the
function. Conditions on block-uniform values (``blockDim.x``, a loop step, a flag in shared
memory) are fine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BARRIERS = ("__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or")
_COMMENT_OR_LITERAL = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S
)
_WORD = re.compile(r"[A-Za-z_]\w*")
_ASSIGN = re.compile(r"\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?(?:<<|>>|[-+*/%&|^])?=(?!=)([^;{}]*)")
_CONTROL = re.compile(r"\b(if|while|for|switch)\s*\($")
_ALLOC = re.compile(r"\b(cudaMalloc\w*|cudaFree\w*|malloc|free)\s*\(")
_SEEDS = {"threadIdx", "__lane_id", "laneid"}
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:\([^)\n]*\))?[ \t]+(.+)$", re.M)
_DECLARATOR = re.compile(r"\s*\**\s*([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?=(?!=)(.*)", re.S)


@dataclass(frozen=True)
class Finding:
    """A barrier reached only by some threads."""

    line: int
    barrier: str
    statement: str  # e.g. "if (tid < s)"


@dataclass(frozen=True)
class EarlyReturn:
    """A ``return`` reached only by some threads, before a barrier of the same function."""

    line: int
    statement: str  # e.g. "if (row >= M || col >= N)"
    barrier: str  # the first barrier (or call of a function containing one) after it
    barrier_line: int


def strip(source: str) -> str:
    """Comments and string literals blanked out, line numbers kept."""
    return _COMMENT_OR_LITERAL.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), source)


def _pairs(text: str, open_: str, close: str) -> dict[int, int]:
    """Matching positions (open -> close) of a bracket kind."""
    stack, pairs = [], {}
    for i, ch in enumerate(text):
        if ch == open_:
            stack.append(i)
        elif ch == close and stack:
            pairs[stack.pop()] = i
    return pairs


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


class _Source:
    def __init__(self, source: str) -> None:
        self.text = strip(source)
        self.braces = _pairs(self.text, "{", "}")
        self.parens = _pairs(self.text, "(", ")")
        self.closing = {c: o for o, c in self.parens.items()}

    def enclosing(self, pos: int) -> list[int]:
        """Opening braces around ``pos``, innermost first."""
        return sorted((o for o, c in self.braces.items() if o < pos < c), reverse=True)

    def header(self, brace: int) -> tuple[str, str]:
        """(kind, condition) of the statement that opens ``brace``: kind is if/while/for/
        switch/else/do/function/other."""
        end = len(self.text[:brace].rstrip())
        if end and self.text[end - 1] == ")":
            return self._paren_header(end - 1)
        word = self.text[:end].rsplit(None, 1)[-1] if self.text[:end].strip() else ""
        if word == "else":
            return "else", self._else_condition(end - 4)
        if word == "do":
            close = self.braces[brace]
            after = re.match(r"\s*while\s*(\()", self.text[close + 1 :])
            if after:
                start = close + 1 + after.start(1)
                return "do", self.text[start : self.parens.get(start, start) + 1]
            return "do", ""
        return "other", ""

    def _paren_header(self, close: int) -> tuple[str, str]:
        start = self.closing.get(close)
        if start is None:
            return "other", ""
        before = self.text[:start].rstrip()
        m = re.search(r"\b(if|while|for|switch)$", before)
        condition = self.text[start : close + 1]
        if m:
            return m.group(1), condition
        name = re.search(r"([A-Za-z_]\w*)\s*(?:<[^;(){}]*>)?$", before)
        return ("function", name.group(1)) if name else ("other", "")

    def _else_condition(self, else_pos: int) -> str:
        """The condition of the ``if`` an ``else`` at ``else_pos`` belongs to."""
        before = self.text[:else_pos].rstrip()
        if before.endswith("}"):
            opening = next((o for o, c in self.braces.items() if c == len(before) - 1), None)
            if opening is not None:
                kind, condition = self.header(opening)
                return condition if kind == "if" else ""
        return ""

    def function_of(self, pos: int) -> tuple[str, int] | None:
        """(name, opening brace) of the function around ``pos``."""
        for brace in self.enclosing(pos):
            kind, name = self.header(brace)
            if kind == "function":
                return name, brace
        return None

    def braceless(self, pos: int) -> tuple[str, str] | None:
        """``if (c) __syncthreads();`` or ``if (c) r = block_sum(v);``: the control statement
        without braces whose body holds ``pos``."""
        before = self.text[:pos].rstrip()
        if before.endswith(")"):
            kind, condition = self._paren_header(len(before) - 1)
            if kind in ("if", "while", "for", "switch"):
                return kind, condition
        if re.search(r"\belse$", before):
            return "else", self._else_condition(len(before) - 4)
        start = self._statement_start(pos)
        head = self.text[start:pos]
        m = re.match(r"\s*(if|while|for|switch)\s*\(", head)
        if m:
            opening = start + m.end() - 1
            close = self.parens.get(opening)
            if close is not None and close < pos:
                return m.group(1), self.text[opening : close + 1]
        m = re.match(r"\s*else\b", head)
        if m:
            end = start - 1  # the ; or } that ends the if's own body
            if self.text[end] == ";":
                previous = self._statement_start(end)
                top = re.match(r"\s*if\s*\(", self.text[previous:end])
                if top:
                    opening = previous + top.end() - 1
                    close = self.parens.get(opening)
                    if close is not None:
                        return "else", self.text[opening : close + 1]
            return "else", self._else_condition(start + m.start())
        return None

    def _statement_start(self, pos: int) -> int:
        """Where the statement holding ``pos`` begins: after the last ``;``, ``{`` or ``}``
        before it outside parentheses."""
        depth, i = 0, pos - 1
        while i >= 0:
            ch = self.text[i]
            if ch == ")":
                depth += 1
            elif ch == "(" and depth:
                depth -= 1
            elif ch in ";{}" and depth == 0:
                break
            i -= 1
        return i + 1


def _top_level_parts(text: str) -> list[str]:
    """``text`` split at the commas outside brackets: ``"a, b = f(c, d)"`` -> 2 parts."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _assignments(body: str) -> list[tuple[str, set[str]]]:
    """(name, names it is computed from) for every assignment in ``body``, each declarator of
    ``const int tx = threadIdx.x, ty = threadIdx.y;`` included."""
    found = []
    for m in _ASSIGN.finditer(body):
        first, *others = _top_level_parts(m.group(2))
        found.append((m.group(1), set(_WORD.findall(first))))
        for part in others:
            if declarator := _DECLARATOR.match(part):
                found.append((declarator.group(1), set(_WORD.findall(declarator.group(2)))))
    return found


def thread_macros(text: str) -> set[str]:
    """Macros whose expansion depends on the thread (``#define TX threadIdx.x``)."""
    tainted: set[str] = set()
    defines = [(m.group(1), set(_WORD.findall(m.group(2)))) for m in _DEFINE.finditer(text)]
    changed = True
    while changed:
        changed = False
        for name, used in defines:
            if name not in tainted and used & (tainted | _SEEDS):
                tainted.add(name)
                changed = True
    return tainted


def thread_dependent(body: str, seeds: set[str] | None = None) -> set[str]:
    """Names assigned (directly or through others) from ``threadIdx`` (or one of ``seeds``,
    such as a thread-dependent macro) in ``body``."""
    tainted = set(_SEEDS) | (seeds or set())
    assignments = _assignments(body)
    changed = True
    while changed:
        changed = False
        for name, used in assignments:
            if name not in tainted and used & tainted:
                tainted.add(name)
                changed = True
    return tainted


def divergent_barriers(source: str) -> list[Finding]:
    """Barriers (or calls of functions containing one) under a thread-dependent branch."""
    src = _Source(source)
    findings = []
    for pos, name in _barrier_calls(src):
        function = src.function_of(pos)
        if function is None:
            continue
        statement = _thread_condition(src, pos, function[1])
        if statement is not None:
            findings.append(Finding(_line(src.text, pos), name, statement))
    return findings


def early_returns(source: str) -> list[EarlyReturn]:
    """``return`` statements under a thread-dependent branch (``if (row >= M) return;``) that
    come before a barrier (or a call of a function containing one) in the same function:
    the threads that return never reach that barrier."""
    src = _Source(source)
    calls = [(pos, name, src.function_of(pos)) for pos, name in _barrier_calls(src)]
    found = []
    for m in re.finditer(r"\breturn\b", src.text):
        function = src.function_of(m.start())
        if function is None:
            continue
        later = [
            (pos, name)
            for pos, name, around in calls
            if pos > m.start() and around is not None and around[1] == function[1]
        ]
        if not later:
            continue
        statement = _thread_condition(src, m.start(), function[1])
        if statement is not None:
            pos, name = later[0]
            found.append(
                EarlyReturn(_line(src.text, m.start()), statement, name, _line(src.text, pos))
            )
    return found


def _thread_condition(src: _Source, pos: int, function_brace: int) -> str | None:
    """The innermost statement around ``pos`` (inside the function opened at
    ``function_brace``) whose condition depends on the thread, as shown in a message."""
    body = src.text[function_brace : src.braces[function_brace] + 1]
    tainted = thread_dependent(body, thread_macros(src.text))
    statements = []
    if (inline := src.braceless(pos)) is not None:
        statements.append(inline)
    for brace in src.enclosing(pos):
        if brace == function_brace:
            break
        statements.append(src.header(brace))
    for kind, condition in statements:
        if kind in ("if", "else", "while", "for", "switch", "do") and (
            set(_WORD.findall(condition)) & tainted
        ):
            shown = " ".join(condition.split())
            return f"else (of if {shown})" if kind == "else" else f"{kind} {shown}"
    return None


def _barrier_calls(src: _Source) -> list[tuple[int, str]]:
    """(position, name) of every barrier and every call of a function that contains one."""
    names = set(BARRIERS)
    while True:
        found = []
        pattern = re.compile(r"\b(" + "|".join(sorted(names)) + r")\s*(?:<[^;(){}]*>)?\s*\(")
        for m in pattern.finditer(src.text):
            function = src.function_of(m.start())
            if function is not None and function[0] != m.group(1):
                found.append((m.start(), m.group(1), function[0]))
        grown = names | {f for _, _, f in found}
        if grown == names:
            return [(pos, name) for pos, name, _ in found]
        names = grown


_LAUNCH = re.compile(r"<<<(.*?)>>>", re.S)
_DEFAULT_STREAMS = {"0", "0u", "nullptr", "NULL", "cudaStreamLegacy", "cudaStreamPerThread"}


def streams(source: str) -> list[tuple[int, str]]:
    """(line, what) for each stream created and each launch on a stream other than the
    default one (a fourth launch parameter that is not 0)."""
    text = strip(source)
    found = [
        (_line(text, m.start()), f"creates a stream ({m.group(1)})")
        for m in re.finditer(r"\b(cudaStreamCreate\w*)\s*\(", text)
    ]
    for m in _LAUNCH.finditer(text):
        config = [part.strip() for part in _top_level_parts(m.group(1))]
        if len(config) == 4 and config[3] not in _DEFAULT_STREAMS:
            found.append((_line(text, m.start()), f"launches on the stream `{config[3]}`"))
    return sorted(found)


def allocations(source: str) -> list[tuple[int, str]]:
    """(line, name) of cudaMalloc/cudaFree/malloc/free calls."""
    text = strip(source)
    return [(_line(text, m.start()), m.group(1)) for m in _ALLOC.finditer(text)]
