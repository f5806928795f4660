"""How blocks are found in a card's text, what their info strings mean, and the counts."""

from __future__ import annotations

from quizzer.bank.code_blocks import code_blocks, describe, plain_fences, split_info, summarise
from quizzer.bank.model import Question

ANSWER = """Intro.

```python tested
def f(x):
    return x
```

```cuda fragment sm_90a
wgmma.fence.sync.aligned;
```

```
a = b + c
```
"""


def _card(answer: str = ANSWER) -> Question:
    return Question("c1", "red", "easy", "Q?", answer, ("point",))


def test_split_info() -> None:
    assert split_info("cuda fragment sm_90a") == ("cuda", ("fragment", "sm_90a"))
    assert split_info("Python") == ("python", ())
    assert split_info("") == ("", ())


def test_blocks_and_what_is_done_with_them() -> None:
    python, cuda, bare = code_blocks(_card())
    assert (python.label, python.tested, python.defines, python.check) == (
        "c1#0",
        True,
        True,
        "executed",
    )
    assert (cuda.fragment, cuda.arch, cuda.check) == (True, "sm_90a", "fragment")
    assert (bare.lang, bare.check) == ("", "unchecked")


def test_summary_and_show_line() -> None:
    summary = summarise([_card()])
    assert (summary.blocks, summary.tested, summary.defining, summary.defining_tested) == (
        3,
        1,
        1,
        1,
    )
    assert "(100% of the Python blocks that define a function or class)" in summary.line()
    assert describe(_card()) == (
        "code tested: 1 of 3 blocks behaviour-tested (1 executed, 1 fragment, 1 unchecked)"
    )
    assert describe(_card("No code.")) is None
    assert summarise([]).line() == "code blocks: none"


def test_plain_fences_keeps_only_the_language() -> None:
    text = plain_fences(ANSWER)
    assert "```python\n" in text and "```cuda\n" in text and "tested" not in text
    assert plain_fences("no code") == "no code"
