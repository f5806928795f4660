"""Part 2: the tiled backward pass, P rebuilt from lse and D_i = rowsum(dO * O)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import torch
from _harness import (
    Case,
    call_backward,
    check_backward,
    make_case,
    random_cases,
    shape_id,
    smallest_failure,
    upstream,
)
from _reference import attention
from _rules import no_square_tensors, score_tiles
from _watch import Watch

Fn = Callable[..., Any]


def _saved(case: Case) -> tuple[torch.Tensor, torch.Tensor]:
    """The reference forward's (o, lse), in the case's dtype."""
    o, lse = attention(*(x.double() for x in (case.q, case.k, case.v)), case.causal)
    return o.to(case.q.dtype), lse.to(case.q.dtype)


def test_returns_dq_dk_dv(backward: Fn, device: str) -> None:
    """A tuple (dq, dk, dv) shaped like q, k and v, inputs left untouched."""
    case = make_case(2, 3, 5, 7, 4, block_q=4, block_k=4, device=device)
    call_backward(backward, case, *_saved(case), upstream(case))


SHAPES = [
    # B, H, Nq, Nk, d, block_q, block_k
    (1, 1, 1, 1, 4, 4, 4),
    (2, 3, 17, 33, 8, 16, 16),
    (1, 2, 50, 7, 8, 16, 4),
    (2, 2, 40, 100, 32, 8, 16),
    (1, 1, 3, 129, 64, 64, 64),
]


@pytest.mark.parametrize("shape", SHAPES, ids=[shape_id(*s) for s in SHAPES])
def test_matches_autograd(backward: Fn, device: str, shape: tuple[int, ...]) -> None:
    b, h, nq, nk, d, bq, bk = shape
    case = make_case(
        b, h, nq, nk, d, block_q=bq, block_k=bk, seed=nq + nk, spread=2.0, device=device
    )
    check_backward(backward, case)


CAUSAL = [
    (1, 2, 24, 24, 8, 8, 8),
    (2, 1, 37, 37, 8, 16, 8),
    (1, 2, 10, 50, 8, 4, 16),
    (1, 1, 1, 45, 16, 16, 16),
    (2, 2, 33, 70, 16, 8, 32),
]


@pytest.mark.parametrize("shape", CAUSAL, ids=[shape_id(*s) for s in CAUSAL])
def test_causal_matches_autograd(backward: Fn, device: str, shape: tuple[int, ...]) -> None:
    """Bottom-right causal, as in the forward: query i sees keys j <= i + Nk - Nq."""
    b, h, nq, nk, d, bq, bk = shape
    case = make_case(
        b,
        h,
        nq,
        nk,
        d,
        causal=True,
        block_q=bq,
        block_k=bk,
        seed=nq * nk,
        spread=2.0,
        device=device,
    )
    check_backward(backward, case)


def test_random_shapes_and_blocks(backward: Fn, device: str) -> None:
    """16 random shapes (seeded) with blocks from 1 to 16, half of them causal; the smallest
    failing one is reported."""
    smallest_failure(
        random_cases(16, seed=200, device=device), lambda case: check_backward(backward, case)
    )


def test_large_scores(backward: Fn, device: str) -> None:
    """Scores of a few thousand: P = exp(S - lse) stays in [0, 1]."""
    case = make_case(
        1, 2, 20, 40, 16, causal=True, block_q=8, block_k=8, seed=7, spread=300.0, device=device
    )
    check_backward(backward, case, "scores up to about 1200")


def test_causal_rejects_more_queries_than_keys(backward: Fn, device: str) -> None:
    case = make_case(1, 1, 9, 4, 8, causal=True, block_q=4, block_k=4, device=device)
    o = torch.zeros_like(case.q)
    lse = torch.zeros(case.q.shape[:-1], dtype=case.q.dtype, device=device)
    try:
        backward(case.q, case.k, case.v, o, lse, o, **case.kwargs)
    except NotImplementedError as exc:
        pytest.fail(f"flash_attention_backward is not implemented yet ({exc})", pytrace=False)
    except ValueError:
        return
    except Exception as exc:
        pytest.fail(
            "flash_attention_backward with causal=True and Nq = 9 > Nk = 4 must raise "
            f"ValueError, got {type(exc).__name__}: {exc}",
            pytrace=False,
        )
    pytest.fail(
        "flash_attention_backward with causal=True and Nq = 9 > Nk = 4 must raise ValueError, "
        "like the forward",
        pytrace=False,
    )


BLOCKS = [(False, 16, 32), (True, 32, 12)]


@pytest.mark.parametrize(
    ("causal", "block_q", "block_k"), BLOCKS, ids=[f"causal{c}-bq{q}-bk{k}" for c, q, k in BLOCKS]
)
def test_block_sizes_are_honoured(
    backward: Fn, device: str, causal: bool, block_q: int, block_k: int
) -> None:
    """Every score tile (S, dP or their transposes) is at most block_q x block_k."""
    case = make_case(
        1, 2, 100, 150, 8, causal=causal, block_q=block_q, block_k=block_k, seed=3, device=device
    )
    o, lse = _saved(case)
    do = upstream(case)
    with Watch(query=(case.q, o, lse, do), key=(case.k, case.v)) as seen:
        call_backward(backward, case, o, lse, do)
    score_tiles(seen, case, "flash_attention_backward")
    check_backward(backward, case)


def test_never_materialises_the_score_matrix(backward: Fn, device: str) -> None:
    """Nq = Nk = 2048, d = 16, causal: no tensor of Nq * Nk / 4 = 1,048,576 elements or more."""
    case = make_case(
        1, 2, 2048, 2048, 16, causal=True, block_q=128, block_k=128, seed=11, device=device
    )
    o, lse = _saved(case)
    do = upstream(case)
    with Watch() as seen:
        call_backward(backward, case, o, lse, do)
    no_square_tensors(seen, case, "flash_attention_backward")


@pytest.mark.cuda
def test_larger_case_on_gpu(backward: Fn, device: str, record_metric: Callable[..., None]) -> None:
    """B = 2, H = 4, N = 512, d = 64 in float32 on the GPU against autograd in float64; the
    time is reported, not graded."""
    case = make_case(
        2,
        4,
        512,
        512,
        64,
        causal=True,
        block_q=128,
        block_k=128,
        seed=13,
        dtype=torch.float32,
        device=device,
    )
    check_backward(backward, case, "on the GPU")
    o, lse = _saved(case)
    do = upstream(case)
    torch.cuda.synchronize()
    start = time.perf_counter()
    backward(case.q, case.k, case.v, o, lse, do, **case.kwargs)
    torch.cuda.synchronize()
    record_metric("backward time, B2 H4 N512 d64", (time.perf_counter() - start) * 1e3, "ms")
