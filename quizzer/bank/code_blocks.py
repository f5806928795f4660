"""Fenced code blocks of the bank: what each one is, how it is checked, and how they add up.

A block's info string is its language followed by tags:

- ``fragment``: not a complete unit (a line of PTX, statements lifted from a kernel, a
  formula, shell commands). Python fragments are still parsed; other fragments are only
  counted.
- ``tested``: a behaviour test runs the block against a reference; the test suite keeps
  the tag honest in both directions.
- ``sm_90a``, ``sm_100a``...: the GPU architecture a CUDA block is compiled for.

Every other block is checked by its language: Python is parsed and run, C and C++ are
compiled (and run when they hold a ``main``), CUDA is compiled (and linked when it holds a
``main``; nothing runs it without a GPU), shell is parsed. A block whose language has no
check and that is not a fragment is reported as unchecked (``text`` blocks of formulas
are fragments too).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from quizzer.bank.model import Question

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

FRAGMENT = "fragment"
TESTED = "tested"
ARCH = re.compile(r"sm_\d+[af]?")
# What a complete block of each language gets: the strongest check it is put through.
CHECKS: dict[str, str] = {
    "python": "executed",
    "cpp": "compiled",
    "c": "compiled",
    "cuda": "compiled",
    "bash": "parsed",
}
# An opening fence with something after its language: the line `plain_fences` rewrites.
_FENCE_WITH_TAGS = re.compile(r"^([ \t]*(?:`{3,}|~{3,})[ \t]*)(\S+)[ \t]+\S.*$", re.M)


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """One fenced block of a card, numbered from 0 in the order the card's text has them."""

    question: str
    index: int
    lang: str
    tags: tuple[str, ...]
    code: str
    field: str = "answer"

    @property
    def fragment(self) -> bool:
        """Marked as not meant to stand alone."""
        return FRAGMENT in self.tags

    @property
    def tested(self) -> bool:
        """Marked as run by a behaviour test."""
        return TESTED in self.tags

    @property
    def arch(self) -> str | None:
        """The architecture tag of a CUDA block, if it names one."""
        return next((tag for tag in self.tags if ARCH.fullmatch(tag)), None)

    @property
    def check(self) -> str:
        """executed, compiled, parsed, fragment or unchecked: what the suite does with it."""
        if self.fragment:
            return "parsed" if self.lang == "python" else FRAGMENT
        if self.lang in ("c", "cpp") and (self.tested or "int main(" in self.code):
            return "executed"
        return CHECKS.get(self.lang, "unchecked")

    @property
    def defines(self) -> bool:
        """A Python block that defines a function or a class (False if it does not parse)."""
        if self.lang != "python":
            return False
        try:
            tree = ast.parse(self.code)
        except SyntaxError:
            return False
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        return any(isinstance(node, kinds) for node in ast.walk(tree))

    @property
    def label(self) -> str:
        """'card-id#2': how messages and tests name the block."""
        return f"{self.question}#{self.index}"


def split_info(info: str) -> tuple[str, tuple[str, ...]]:
    """`'cuda fragment sm_90a'` -> `('cuda', ('fragment', 'sm_90a'))`."""
    words = info.split()
    return (words[0].lower(), tuple(words[1:])) if words else ("", ())


def unknown_tags(block: CodeBlock) -> list[str]:
    """Tags of `block` that mean nothing here (a typo would otherwise hide a block)."""
    known = {FRAGMENT, TESTED}
    return [tag for tag in block.tags if tag not in known and not ARCH.fullmatch(tag)]


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt  # only where blocks are counted: study never needs it

    return MarkdownIt("commonmark")


def _fields(question: Question) -> Iterable[tuple[str, str]]:
    yield "question", question.question
    yield "answer", question.answer
    for point in question.key_points:
        yield "key_points", point
    for follow in question.follow_ups:
        yield "follow_ups", follow


def code_blocks(question: Question) -> list[CodeBlock]:
    """Every fenced block of a card's text fields, numbered across them in order."""
    blocks: list[CodeBlock] = []
    for field, text in _fields(question):
        if "```" not in text and "~~~" not in text:
            continue
        for token in _parser().parse(text):
            if token.type != "fence":
                continue
            lang, tags = split_info(token.info)
            blocks.append(CodeBlock(question.id, len(blocks), lang, tags, token.content, field))
    return blocks


def plain_fences(markdown: str) -> str:
    """`markdown` with each fence's info string cut to its language, for renderers that
    take the whole info string for a lexer name (Textual's Markdown widget does)."""
    if "```" not in markdown and "~~~" not in markdown:
        return markdown
    return _FENCE_WITH_TAGS.sub(r"\1\2", markdown)


@dataclass(frozen=True, slots=True)
class CodeSummary:
    """How the blocks of some cards are checked."""

    blocks: int
    by_lang: dict[str, int]
    by_check: dict[str, int]
    tested: int
    defining: int  # Python blocks that define a function or class
    defining_tested: int

    def line(self) -> str:
        """One line for `quizzer bank validate`."""
        if not self.blocks:
            return "code blocks: none"
        langs = ", ".join(f"{n} {lang or 'no language'}" for lang, n in self.by_lang.items())
        checks = ", ".join(f"{n} {check}" for check, n in self.by_check.items())
        share = self.defining_tested / self.defining if self.defining else 1.0
        return (
            f"code blocks: {self.blocks} ({langs}); {checks}; {self.tested} behaviour-tested "
            f"({share:.0%} of the Python blocks that define a function or class)"
        )


def summarise(questions: Iterable[Question]) -> CodeSummary:
    """Counts over every block of `questions`."""
    blocks = [block for q in questions for block in code_blocks(q)]
    by_lang = Counter(block.lang for block in blocks)
    by_check = Counter(block.check for block in blocks)
    defining = [block for block in blocks if block.defines]
    return CodeSummary(
        blocks=len(blocks),
        by_lang=dict(by_lang.most_common()),
        by_check=dict(by_check.most_common()),
        tested=sum(block.tested for block in blocks),
        defining=len(defining),
        defining_tested=sum(block.tested for block in defining),
    )


def describe(question: Question) -> str | None:
    """The line `quizzer show` prints about a card's code; None for a card without code.

    'code tested: 1 of 2 blocks behaviour-tested (1 executed, 1 compiled)'.
    """
    blocks = code_blocks(question)
    if not blocks:
        return None
    noun = "block" if len(blocks) == 1 else "blocks"
    checks = Counter(block.check for block in blocks)
    how = ", ".join(f"{n} {check}" for check, n in checks.most_common())
    tested = sum(block.tested for block in blocks)
    if not tested:
        return f"code not behaviour-tested: {len(blocks)} {noun} ({how})"
    return f"code tested: {tested} of {len(blocks)} {noun} behaviour-tested ({how})"
