"""Every fenced block of the bank is parsed, run, compiled or marked a fragment, and the
`tested` tags match the behaviour tests in this folder."""

from __future__ import annotations

import ast
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from quizzer.bank.code_blocks import CHECKS, TESTED, CodeBlock, summarise, unknown_tags
from tests.bank_code.blocks import all_blocks, bank
from tests.bank_code.checks import HARNESSES, check_all, cuda_arch, tool_missing

HERE = Path(__file__).parent
MIN_DEFINING_TESTED = 0.80


def _checked(lang: str) -> list[CodeBlock]:
    return [b for b in all_blocks() if b.lang == lang and not b.fragment]


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest) -> dict:
    """Check every non-fragment block once (in parallel, cached by content)."""
    cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    cache_dir = (
        Path(cache.mkdir("bank-code")) if cache else Path(tempfile.gettempdir()) / "bank-code"
    )
    wanted = [b for b in all_blocks() if b.lang in CHECKS and not b.fragment]
    runnable = [b for b in wanted if tool_missing(b.lang) is None]
    return check_all(runnable, cache_dir)


def test_every_block_is_checked_or_a_fragment():
    unchecked = [
        f"{b.label} ({b.lang or 'no language'})" for b in all_blocks() if b.check == "unchecked"
    ]
    assert not unchecked, "blocks no check covers and not marked fragment:\n" + "\n".join(unchecked)


def test_no_unknown_tags():
    bad = [f"{b.label}: {unknown_tags(b)}" for b in all_blocks() if unknown_tags(b)]
    assert not bad, "\n".join(bad)


def test_python_blocks_parse():
    bad = []
    for b in all_blocks():
        if b.lang == "python":
            try:
                ast.parse(b.code)
            except SyntaxError as exc:
                bad.append(f"{b.label}: {exc}")
    assert not bad, "\n".join(bad)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["python", "cpp", "c", "cuda", "bash"])
def test_blocks_run_or_compile(lang: str, outcomes: dict) -> None:
    missing = tool_missing(lang)
    if missing:
        pytest.skip(f"{missing}: the {lang} blocks of the bank are not compiled here")
    blocks = _checked(lang)
    if not blocks:
        pytest.skip(f"every {lang} block of the bank is a fragment")
    failed = [f"{b.label}:\n{outcomes[b.label].output}" for b in blocks if not outcomes[b.label].ok]
    assert not failed, "\n\n".join(failed)


def _tested_in_tests() -> Counter:
    """(card, index) pairs the behaviour tests load, found in their source, and the C++
    blocks a harness runs."""
    found: Counter = Counter()
    for label in HARNESSES:
        card, index = label.rsplit("#", 1)
        found[(card, int(index))] += 1
    for path in HERE.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "load_block"
            ):
                card, index = node.args[0], node.args[1]
                assert isinstance(card, ast.Constant) and isinstance(index, ast.Constant), (
                    f"{path.name}:{node.lineno}: load_block needs a literal card and index"
                )
                found[(card.value, index.value)] += 1
    return found


def test_tested_tags_match_the_behaviour_tests():
    tagged = {(b.question, b.index) for b in all_blocks() if b.tested}
    loaded = set(_tested_in_tests())
    assert not loaded - tagged, f"tested here but not tagged '{TESTED}': {sorted(loaded - tagged)}"
    assert not tagged - loaded, f"tagged '{TESTED}' but no test loads it: {sorted(tagged - loaded)}"


def test_most_defining_python_blocks_are_behaviour_tested():
    summary = summarise(bank().questions.values())
    assert summary.defining >= 50
    share = summary.defining_tested / summary.defining
    untested = [b.label for b in all_blocks() if b.defines and not b.tested]
    assert share >= MIN_DEFINING_TESTED, f"{share:.0%} tested; not yet: {untested}"


def test_summary_counts_add_up():
    summary = summarise(bank().questions.values())
    assert summary.blocks == len(all_blocks()) == sum(summary.by_lang.values())
    assert sum(summary.by_check.values()) == summary.blocks
    assert "unchecked" not in summary.by_check


def test_cuda_arch_follows_the_tag_then_the_instructions() -> None:
    def cuda(code: str, *tags: str) -> CodeBlock:
        return CodeBlock("c", 0, "cuda", tags, code)

    assert cuda_arch(cuda("__global__ void k() {}")) == "sm_90"
    assert cuda_arch(cuda('asm volatile("wgmma.fence.sync.aligned;");')) == "sm_90a"
    assert cuda_arch(cuda("tcgen05.mma")) == "sm_100a"
    assert cuda_arch(cuda("tcgen05.mma", "sm_103a")) == "sm_103a"


@pytest.mark.slow
def test_a_wgmma_block_compiles_for_sm_90a_only(tmp_path: Path) -> None:
    if tool_missing("cuda"):
        pytest.skip("nvcc is not installed")
    code = '__global__ void k() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }\n'
    right = CodeBlock("c", 0, "cuda", (), code)
    wrong = CodeBlock("c", 1, "cuda", ("sm_90",), code)
    outcomes = check_all([right, wrong], tmp_path)
    assert outcomes["c#0"].ok, outcomes["c#0"].output
    assert not outcomes["c#1"].ok  # ptxas refuses wgmma without the 'a' features
