"""Getting at the bank's code blocks from tests: by card id and index, with their prelude.

Answers leave out the imports every reader assumes, so a Python block gets a prelude:
the names it uses without defining (`torch`, `F`, `np`...) are imported for it.
"""

from __future__ import annotations

import ast
import builtins
from functools import cache
from typing import Any

from quizzer.bank.code_blocks import CodeBlock, code_blocks
from quizzer.bank.loader import check_bank
from quizzer.bank.model import Bank

PY_PRELUDE = {
    "math": "import math",
    "copy": "import copy",
    "deque": "from collections import deque",
    "Counter": "from collections import Counter",
    "defaultdict": "from collections import defaultdict",
    "OrderedDict": "from collections import OrderedDict",
    "random": "import random",
    "heapq": "import heapq",
    "bisect": "import bisect",
    "collections": "import collections",
    "np": "import numpy as np",
    "torch": "import torch",
    "nn": "import torch.nn as nn",
    "F": "import torch.nn.functional as F",
}


@cache
def bank() -> Bank:
    """The built-in bank, loaded once per test process."""
    loaded, problems = check_bank()
    if problems:
        raise RuntimeError(f"the bank has problems: {problems[:3]}")
    return loaded


@cache
def all_blocks() -> tuple[CodeBlock, ...]:
    """Every fenced block of every card, in bank order."""
    return tuple(block for q in bank().questions.values() for block in code_blocks(q))


def block(card: str, index: int) -> CodeBlock:
    """Block `index` of card `card`."""
    return code_blocks(bank().questions[card])[index]


def free_names(code: str) -> set[str]:
    """Names `code` reads without ever binding or importing them, builtins excluded."""
    tree = ast.parse(code)
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return read - bound - set(dir(builtins))


def python_prelude(code: str) -> str:
    """The imports a Python block relies on without writing them."""
    return "\n".join(PY_PRELUDE[name] for name in sorted(free_names(code)) if name in PY_PRELUDE)


def load_block(card: str, index: int, **names: Any) -> dict[str, Any]:
    """Run block `index` of `card` (which must be tagged `tested`) in a fresh namespace
    holding its prelude and `names`; return the namespace.

    A fragment runs too: `names` stand in for what its surrounding code would define.
    """
    found = block(card, index)
    if found.lang != "python" or not found.tested:
        raise LookupError(f"{found.label} is not a Python block tagged 'tested'")
    namespace: dict[str, Any] = {"__name__": f"bank_{card.replace('-', '_')}_{index}"}
    exec(compile(python_prelude(found.code), "<prelude>", "exec"), namespace)
    namespace.update(names)
    exec(compile(found.code, f"<{found.label}>", "exec"), namespace)
    return namespace
