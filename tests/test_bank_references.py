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


# Hosts that serve documentation. There a folder (or a page name without an extension)
# with one specific segment is a product's front page: docs.nvidia.com/nsight-compute/.
DOCS_HOST = re.compile(r"^(docs\.|.*\.readthedocs\.io$|.*\.github\.io$|developer\.nvidia\.com$)")
# Segments of a docs host that only group products (docs.nvidia.com/deeplearning/tensorrt/).
DOCS_GROUPS = {"cuda", "deeplearning", "deploy", "projects", "hpc-sdk", "datacenter"}
README = re.compile(r"readme(\.\w+)?", re.IGNORECASE)
_VERSION = re.compile(r"v?\d+(\.\d+)*")


def _specific(segments: list[str], generic: set[str]) -> list[str]:
    return [s for s in segments if s.lower() not in generic and not _VERSION.fullmatch(s)]


def is_landing_page(url: str) -> bool:
    """True when ``url`` points at a site, a docs root or a repository root (or its README)."""
    parts = urlparse(url)
    host = parts.netloc.lower().removeprefix("www.")
    anchor = parts.fragment.lower() not in ("", "readme")  # '#readme' is the front page
    if host in PERMALINK_HOSTS or anchor or parts.query:
        return False
    segments = [s for s in parts.path.split("/") if s]
    if host == "github.com":
        rest = _specific(segments[2:], GENERIC_SEGMENTS)
        # owner/repo, or a branch's README: the repository's front page
        return len(segments) <= 2 or (len(rest) == 1 and bool(README.fullmatch(rest[0])))
    if not DOCS_HOST.match(host):
        return not _specific(segments, GENERIC_SEGMENTS)
    last = segments[-1].lower() if segments else ""
    if "." in last and last not in GENERIC_SEGMENTS and not _VERSION.fullmatch(last):
        return False  # a page file, not a folder or an index
    if host.endswith(".github.io"):
        segments = segments[1:]  # the project's name: nvidia.github.io/cccl/
    return len(_specific(segments, GENERIC_SEGMENTS | DOCS_GROUPS)) <= 1


@pytest.mark.parametrize(
    ("url", "landing"),
    [
        ("https://docs.vllm.ai/en/latest/", True),
        ("https://docs.vllm.ai/", True),
        ("https://github.com/NVIDIA/cutlass", True),
        ("https://triton-lang.org/main/index.html", True),
        ("https://www.mindspore.cn/en", True),
        ("https://docs.python.org/3.12/", True),
        ("https://docs.nvidia.com/nsight-compute/", True),
        ("https://docs.nvidia.com/deeplearning/tensorrt/", True),
        ("https://nvidia.github.io/cccl/cub/", True),
        ("https://docs.nvidia.com/cuda/parallel-thread-execution/index.html", True),
        ("https://developer.nvidia.com/drive", True),
        ("https://raft.github.io/raft.pdf", False),
        ("https://docs.nvidia.com/cuda/hopper-tuning-guide/index.html", True),
        ("https://docs.vllm.ai/en/latest/design/prefix_caching/", False),
        ("https://github.com/deepseek-ai/DeepEP/blob/main/README.md", True),
        ("https://github.com/deepseek-ai/DeepEP#readme", True),
        ("https://github.com/deepseek-ai/DeepEP#low-latency-kernels", False),
        ("https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#mbarrier", False),
        ("https://nvidia.github.io/cccl/cub/api/structcub_1_1DeviceRadixSort.html", False),
        ("https://github.com/vllm-project/vllm/blob/main/vllm/v1/core/README.md", False),
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
