"""Parse bank YAML into validated records; every problem is collected with file and line.

YAML is read with the safe loader, with one step between composing the node tree and
constructing values: every node whose tag is not a plain YAML type (``!!python/...``,
``!foo``, ``!!set``...), every scalar its tag cannot parse (``!!int 1e99999``) and every
key that is a list or mapping becomes a located problem and a null, so nothing is built
from an unknown tag, nothing raises, and one run reports everything. Files over
`MAX_FILE_BYTES` are refused before they are read.
"""

from __future__ import annotations

import difflib
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from quizzer.errors import QuizzerError

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True, slots=True)
class Problem:
    path: str
    line: int
    message: str
    qid: str | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        who = f" [{self.qid}]" if self.qid else ""
        return f"{where}:{who} {self.message}"


class BankError(QuizzerError):
    exit_code = 1

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        first = self.problems[0] if self.problems else "unknown problem"
        more = f" (and {len(self.problems) - 1} more; run 'quizzer bank validate')"
        super().__init__(f"bank is invalid: {first}" + (more if len(self.problems) > 1 else ""))


class _Loader(_Base):  # type: ignore[misc, valid-type]
    """The safe loader; `_clean_tree` runs between composing and constructing."""


MAX_FILE_BYTES = 4 * 1024 * 1024  # ~20x the largest shipped file; a few seconds to validate
_CORE = "tag:yaml.org,2002:"
_STR, _SEQ, _MAP = _CORE + "str", _CORE + "seq", _CORE + "map"
_SCALARS = {_CORE + kind: kind for kind in ("str", "int", "float", "bool", "null", "timestamp")}
_KIND = {yaml.SequenceNode: ("list", _SEQ), yaml.MappingNode: ("mapping", _MAP)}

Slot = list  # a mutable place holding a node: [node], or a mapping's [key, value] pair


def _tag_problem(node: yaml.Node) -> str | None:
    """Why this node's tag is refused, or None when it is one of the plain YAML types."""
    tag, short = node.tag, node.tag.replace(_CORE, "!!")
    if isinstance(node, yaml.ScalarNode):
        if tag == _CORE + "value":  # a lone '=' resolves to this tag: keep it as text
            node.tag = tag = _STR
        kind, fits = "single value", tag in _SCALARS
    else:
        kind, expected = _KIND[type(node)]
        fits = tag == expected
    if fits:
        return None
    if tag in (_SEQ, _MAP, *_SCALARS):
        return f"tag {short} does not fit a {kind}"
    if short.startswith("!!python/"):
        return f"unsafe tag {short} is not allowed"
    return f"{'tag' if tag.startswith(_CORE) else 'unknown tag'} {short} is not allowed"


def _scalar_problem(loader: _Loader, node: yaml.ScalarNode) -> str | None:
    """Why a plain scalar cannot become a value (e.g. '!!int 1e9', '2026-02-30'), if it can't."""
    if node.tag == _STR:
        return None
    try:
        loader.yaml_constructors[node.tag](loader, node)
    except Exception:
        value = node.value if len(node.value) <= 40 else node.value[:37] + "..."
        return f"'{value}' is not a valid {_SCALARS[node.tag]}"
    return None


def _node_problem(loader: _Loader, node: yaml.Node) -> str | None:
    problem = _tag_problem(node)
    if problem is None and isinstance(node, yaml.ScalarNode):
        problem = _scalar_problem(loader, node)
    return problem


def _key_problem(loader: _Loader, key: yaml.Node) -> str | None:
    if not isinstance(key, yaml.ScalarNode):
        tag = _tag_problem(key)
        return f"a key must be a single value, not a {_KIND[type(key)][0]}" + (
            f"; {tag}" if tag else ""
        )
    if key.tag == _CORE + "merge":
        return "merge keys ('<<') are not supported"
    return _node_problem(loader, key)


def _clean_tree(loader: _Loader, root: yaml.Node, problems: list[tuple[int, str]]) -> yaml.Node:
    """Replace every node that could not be built safely by a null, with a located problem.

    Nothing is constructed from a tag outside the plain YAML types, a value its tag cannot
    parse never reaches a constructor, and a key is always a hashable scalar. Iterative,
    so deep nesting costs no recursion; each node is checked once, aliases included.
    """
    top: Slot = [root]
    stack: list[tuple[Slot, int]] = [(top, 0)]
    # id of a checked node -> (the node, kept alive so its id stays its own; what replaces it)
    done: dict[int, tuple[yaml.Node, yaml.Node]] = {}
    while stack:
        slot, index = stack.pop()
        node = slot[index]
        if id(node) in done:
            slot[index] = done[id(node)][1]
            continue
        problem = _node_problem(loader, node)
        if problem is not None:
            problems.append((node.start_mark.line + 1, problem))
            slot[index] = yaml.ScalarNode(_CORE + "null", "", node.start_mark, node.end_mark)
        done[id(node)] = (node, slot[index])
        if problem is None and isinstance(node, yaml.SequenceNode):
            stack.extend((node.value, i) for i in range(len(node.value)))
        elif problem is None and isinstance(node, yaml.MappingNode):
            pairs = []
            for key, value in node.value:
                why = _key_problem(loader, key)
                if why is not None:
                    problems.append((key.start_mark.line + 1, why))
                    continue
                pairs.append([key, value])
            node.value = pairs
            stack.extend((pair, 1) for pair in pairs)
    return top[0]


def _read(path: Path, label: str) -> tuple[str | None, Problem | None]:
    """The file's text, refused before any parsing when it is not a regular file or too big."""
    limit = f"a bank file may be at most {MAX_FILE_BYTES // 2**20} MB; split it into several"
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return None, Problem(label, 0, "cannot read file: not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            return None, Problem(label, 0, f"file is {info.st_size / 2**20:.1f} MB; {limit}")
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return None, Problem(label, 0, f"cannot read file: {exc.strerror or exc}")
    if len(data) > MAX_FILE_BYTES:  # it grew while being read
        return None, Problem(label, 0, f"file is over the limit; {limit}")
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, Problem(label, line, "not UTF-8 text")


def parse_yaml(path: Path, label: str) -> tuple[Any, yaml.Node | None, list[Problem]]:
    """Parse one file; returns data, its node tree (for line numbers) and problems.

    Never raises: unreadable, oversized, malformed or tagged input comes back as problems.
    """
    text, refused = _read(path, label)
    if text is None:
        return None, None, [refused] if refused else []
    loader = _Loader(text)
    found: list[tuple[int, str]] = []
    try:
        node = loader.get_single_node()
        if node is not None:
            node = _clean_tree(loader, node, found)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        return None, None, [_syntax_problem(exc, label)]
    except yaml.YAMLError as exc:
        position = getattr(exc, "position", None)
        line = text[:position].count("\n") + 1 if isinstance(position, int) else 0
        return None, None, [Problem(label, line, f"YAML error: {exc}".splitlines()[0])]
    except RecursionError:
        return None, None, [Problem(label, 0, "YAML error: nested too deeply")]
    finally:
        loader.dispose()
    return data, node, [Problem(label, line, msg) for line, msg in found]


def _syntax_problem(exc: yaml.MarkedYAMLError, label: str) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark else 0
    message = f"YAML syntax error: {exc.problem}"
    if exc.context and exc.context_mark and exc.context_mark is not mark:
        message += f" ({exc.context} at line {exc.context_mark.line + 1})"
    return Problem(label, line, message)


def locate(node: yaml.Node | None, loc: Sequence[Any]) -> int:
    """Line (1-based) of the deepest node reachable along a pydantic error location."""
    if node is None:
        return 0
    line = node.start_mark.line + 1
    for part in loc:
        child = None
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.value == part:
                    child = value if not isinstance(value, yaml.ScalarNode) else key
                    line = key.start_mark.line + 1
                    break
        elif (
            isinstance(node, yaml.SequenceNode)
            and isinstance(part, int)
            and 0 <= part < len(node.value)
        ):
            child = node.value[part]
            line = child.start_mark.line + 1
        if child is None:
            break
        node = child
    return line


def _pydantic_message(err: dict[str, Any]) -> str:
    loc = ".".join(str(p) for p in err["loc"])
    kind = err["type"]
    if kind == "missing":
        return f"missing field '{loc}'"
    if kind == "extra_forbidden":
        return f"unknown field '{loc}'"
    return f"field '{loc}': {err['msg']}"


def records(
    data: Any,
    node: yaml.Node | None,
    model: type[BaseModel],
    label: str,
    problems: list[Problem],
) -> list[tuple[BaseModel, int]]:
    """Validate a YAML list of mappings against `model`; keeps the valid ones with lines."""
    if data is None:
        return []
    if not isinstance(data, list):
        problems.append(Problem(label, locate(node, ()), "expected a list of entries"))
        return []
    out = []
    for index, item in enumerate(data):
        item_node = node.value[index] if isinstance(node, yaml.SequenceNode) else None
        line = locate(item_node, ())
        qid = item.get("id") if isinstance(item, dict) else None
        qid = qid if isinstance(qid, str) else None
        if not isinstance(item, dict):
            problems.append(Problem(label, line, "expected a mapping", qid))
            continue
        _duplicate_keys(item_node, label, qid, problems)
        try:
            out.append((model.model_validate(item), line))
        except ValidationError as exc:
            for err in exc.errors():
                where = locate(item_node, err["loc"])
                problems.append(Problem(label, where, _pydantic_message(err), qid))
    return out


def _duplicate_keys(
    node: yaml.Node | None, label: str, qid: str | None, problems: list[Problem]
) -> None:
    if not isinstance(node, yaml.MappingNode):
        return
    seen: set[str] = set()
    for key, _ in node.value:
        if not isinstance(key.value, str):
            continue
        if key.value in seen:
            problems.append(
                Problem(label, key.start_mark.line + 1, f"duplicate key '{key.value}'", qid)
            )
        seen.add(key.value)


def suggest(value: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(value, list(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
