"""References must support a card's claim: a site, docs or repository root does not."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest

from quizzer.bank.loader import check_bank

# Path segments that name a site's structure, not a page about anything.
GENERIC_SEGMENTS = {
    "en",
    "latest",
    "stable",
    "main",
    "master",
    "docs",
    "doc",
    "index.html",
    "index",
    "home",
    "documentation",
    "overview",
    "tree",
    "blob",
    "wiki",
}
# Hosts whose every path names one specific work.
PERMALINK_HOSTS = {"doi.org", "dx.doi.org"}


def is_landing_page(url: str) -> bool:
    """True when ``url`` points at a site, a docs root or a repository root."""
    parts = urlparse(url)
    host = parts.netloc.lower().removeprefix("www.")
    if host in PERMALINK_HOSTS:
        return False
    segments = [s for s in parts.path.split("/") if s]
    if host == "github.com" and len(segments) <= 2:
        return True
    specific = [
        s
        for s in segments
        if s.lower() not in GENERIC_SEGMENTS and not re.fullmatch(r"v?\d+(\.\d+)*", s)
    ]
    return not specific and not parts.fragment and not parts.query


@pytest.mark.parametrize(
    ("url", "landing"),
    [
        ("https://docs.vllm.ai/en/latest/", True),
        ("https://docs.vllm.ai/", True),
        ("https://github.com/NVIDIA/cutlass", True),
        ("https://triton-lang.org/main/index.html", True),
        ("https://www.mindspore.cn/en", True),
        ("https://docs.python.org/3.12/", True),
        ("https://github.com/NVIDIA/cutlass/blob/main/media/docs/cute/01_layout.md", False),
        ("https://docs.vllm.ai/en/latest/design/prefix_caching.html", False),
        ("https://arxiv.org/abs/2309.06180", False),
        ("https://doi.org/10.1145/1498765.1498785", False),
        (
            "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#warp-shuffle-functions",
            False,
        ),
    ],
)
def test_landing_page_rule(url, landing):
    assert is_landing_page(url) is landing


def test_no_reference_is_a_landing_page():
    bank, problems = check_bank()
    assert problems == [], problems[:5]
    bad = [
        f"{q.id}: {ref.url}"
        for q in bank.questions.values()
        for ref in q.references
        if is_landing_page(ref.url)
    ]
    assert not bad, f"{len(bad)} references point at a landing page:\n" + "\n".join(bad)
