"""Parse bank YAML into validated records; every problem is collected with file and line.

YAML is read with a subclass of the safe loader whose only change is that tags it
cannot construct (``!!python/...`` and any other) become located problems instead of
aborting the file, so one run reports everything.
"""

from __future__ import annotations

import difflib
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
    problems: list[tuple[int, str]]


def _undefined_tag(loader: _Loader, node: yaml.Node) -> None:
    tag = node.tag.replace("tag:yaml.org,2002:", "!!")
    why = "unsafe tag" if tag.startswith("!!python/") else "unknown tag"
    loader.problems.append((node.start_mark.line + 1, f"{why} {tag} is not allowed"))
    return None


_Loader.add_constructor(None, _undefined_tag)


def parse_yaml(path: Path, label: str) -> tuple[Any, yaml.Node | None, list[Problem]]:
    """Parse one file; returns data, its node tree (for line numbers) and problems."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, None, [Problem(label, 0, f"cannot read file: {exc}")]
    loader = _Loader(text)
    loader.problems = []
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        message = f"YAML syntax error: {exc.problem}"
        if exc.context and exc.context_mark and exc.context_mark is not mark:
            message += f" ({exc.context} at line {exc.context_mark.line + 1})"
        return None, None, [Problem(label, line, message)]
    except yaml.YAMLError as exc:
        return None, None, [Problem(label, 0, f"YAML error: {exc}")]
    finally:
        loader.dispose()
    return data, node, [Problem(label, line, msg) for line, msg in loader.problems]


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
        if key.value in seen:
            problems.append(
                Problem(label, key.start_mark.line + 1, f"duplicate key '{key.value}'", qid)
            )
        seen.add(key.value)


def suggest(value: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(value, list(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
