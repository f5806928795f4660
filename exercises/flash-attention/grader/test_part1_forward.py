"""Part 1: the tiled forward pass, o = softmax(q k^T / sqrt(d) [+ mask]) v and lse."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import torch
from _harness import (
    Case,
    call_forward,
    check_forward,
    make_case,
    random_cases,
    shape_id,
    smallest_failure,
)
from _rules import live_storage, no_square_tensors, score_tiles
from _watch import Watch

Fn = Callable[..., Any]


# ---------------------------------------------------------------- form and exact cases


def test_returns_o_and_lse(forward: Fn, device: str) -> None:
    """A tuple (o [B, H, Nq, d], lse [B, H, Nq]) in q's dtype, inputs left untouched."""
    case = make_case(2, 3, 5, 7, 4, block_q=4, block_k=4, device=device)
    call_forward(forward, case)


@pytest.mark.parametrize(
    ("nk", "block_k"), [(37, 16), (64, 16), (5, 8)], ids=["Nk37-bk16", "Nk64-bk16", "Nk5-bk8"]
)
def test_equal_scores_average_v(forward: Fn, device: str, nk: int, block_k: int) -> None:
    """q = 0 makes every score 0: o is the mean of the values and lse = ln(Nk) exactly."""
    case = make_case(1, 2, 6, nk, 8, block_q=4, block_k=block_k, device=device)
    case = Case(torch.zeros_like(case.q), case.k, case.v, False, 4, block_k)
    check_forward(call_forward(forward, case), case, f"q = 0: o = mean of v, lse = ln({nk})")


def test_one_dominant_key_is_copied(forward: Fn, device: str) -> None:
    """Key 6 (in the second key tile) scores 40 above the other 8 keys: o = v[6]."""
    d = 4
    q = torch.zeros(1, 1, 3, d, dtype=torch.float64)
    q[..., 0] = 80.0
    k = torch.zeros(1, 1, 9, d, dtype=torch.float64)
    k[..., 6, 0] = 1.0
    v = torch.arange(9 * d, dtype=torch.float64).reshape(1, 1, 9, d)
    case = Case(q.to(device), k.to(device), v.to(device), False, 2, 4)
    check_forward(call_forward(forward, case), case, "one key dominates: o = v[6]")


# ---------------------------------------------------------------- against the reference

SHAPES = [
    # B, H, Nq, Nk, d, block_q, block_k
    (1, 1, 1, 1, 4, 4, 4),
    (2, 3, 17, 33, 8, 16, 16),
    (1, 2, 64, 64, 16, 16, 32),
    (1, 1, 50, 7, 8, 16, 4),
    (2, 2, 40, 100, 32, 8, 16),
    (1, 1, 3, 129, 64, 64, 64),
    (1, 2, 31, 45, 8, 32, 8),
]


@pytest.mark.parametrize("shape", SHAPES, ids=[shape_id(*s) for s in SHAPES])
def test_matches_reference(forward: Fn, device: str, shape: tuple[int, ...]) -> None:
    b, h, nq, nk, d, bq, bk = shape
    case = make_case(
        b, h, nq, nk, d, block_q=bq, block_k=bk, seed=nq + nk, spread=2.0, device=device
    )
    check_forward(call_forward(forward, case), case)


CAUSAL = [
    # B, H, Nq, Nk, d, block_q, block_k
    (1, 2, 24, 24, 8, 8, 8),
    (2, 1, 37, 37, 8, 16, 8),
    (1, 2, 10, 50, 8, 4, 16),
    (1, 1, 1, 45, 16, 16, 16),
    (2, 2, 33, 70, 16, 8, 32),
    (1, 1, 7, 8, 4, 2, 3),
]


@pytest.mark.parametrize("shape", CAUSAL, ids=[shape_id(*s) for s in CAUSAL])
def test_causal_is_aligned_bottom_right(forward: Fn, device: str, shape: tuple[int, ...]) -> None:
    """Query i sees keys j <= i + Nk - Nq: the queries are the last Nq positions of the
    sequence (a prefill chunk or a decode step after a KV cache)."""
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
    check_forward(call_forward(forward, case), case)


def test_causal_chunks_of_a_prefill(forward: Fn, device: str) -> None:
    """Prefill of 18 tokens in chunks of 12, 5 and 1 queries, each against the keys so far
    (the cache plus the chunk itself), as chunked prefill and decoding run it."""
    full = make_case(1, 2, 18, 18, 8, causal=True, block_q=4, block_k=8, seed=5, device=device)
    check_forward(call_forward(forward, full), full)
    start = 0
    for size in (12, 5, 1):
        end = start + size
        q, k, v = full.q[..., start:end, :], full.k[..., :end, :], full.v[..., :end, :]
        part = Case(q, k, v, True, 4, 8)
        check_forward(
            call_forward(forward, part), part, f"queries {start}..{end - 1} of an 18-token prefill"
        )
        start = end


def test_causal_rejects_more_queries_than_keys(forward: Fn, device: str) -> None:
    """Causal with Nq > Nk would leave the first Nq - Nk queries without any key."""
    case = make_case(1, 1, 9, 4, 8, causal=True, block_q=4, block_k=4, device=device)
    try:
        forward(case.q, case.k, case.v, **case.kwargs)
    except NotImplementedError as exc:
        pytest.fail(f"flash_attention_forward is not implemented yet ({exc})", pytrace=False)
    except ValueError:
        return
    except Exception as exc:
        pytest.fail(
            f"causal=True with Nq = 9 > Nk = 4 must raise ValueError, got {type(exc).__name__}: "
            f"{exc}",
            pytrace=False,
        )
    pytest.fail(
        "causal=True with Nq = 9 > Nk = 4 must raise ValueError: with the bottom-right "
        "alignment the first Nq - Nk = 5 queries would see no key",
        pytrace=False,
    )


def test_random_shapes_and_blocks(forward: Fn, device: str) -> None:
    """24 random shapes (seeded) with blocks from 1 to 16, half of them causal; the smallest
    failing one is reported."""
    smallest_failure(
        random_cases(24, seed=100, device=device),
        lambda case: check_forward(call_forward(forward, case), case),
    )


# ---------------------------------------------------------------- tiles and memory


BLOCKS = [(False, 16, 32), (True, 16, 32), (False, 32, 12)]


@pytest.mark.parametrize(
    ("causal", "block_q", "block_k"), BLOCKS, ids=[f"causal{c}-bq{q}-bk{k}" for c, q, k in BLOCKS]
)
def test_block_sizes_are_honoured(
    forward: Fn, device: str, causal: bool, block_q: int, block_k: int
) -> None:
    """Every score tile q_tile @ k_tile^T is at most block_q x block_k; full tiles are used."""
    case = make_case(
        1, 2, 100, 150, 8, causal=causal, block_q=block_q, block_k=block_k, seed=3, device=device
    )
    with Watch(query=(case.q,), key=(case.k, case.v)) as seen:
        got = call_forward(forward, case)
    score_tiles(seen, case, "flash_attention_forward")
    check_forward(got, case)


@pytest.mark.parametrize("spread", [300.0, 3000.0], ids=["scores-300", "scores-3000"])
def test_large_scores_do_not_overflow(forward: Fn, device: str, spread: float) -> None:
    """Scores of a few thousand: exp(s) overflows float64 above 709.78, exp(s - m) never."""
    for causal in (False, True):
        case = make_case(
            1,
            2,
            20,
            40,
            16,
            causal=causal,
            block_q=8,
            block_k=8,
            seed=7,
            spread=spread,
            device=device,
        )
        check_forward(call_forward(forward, case), case, f"scores up to about {4 * spread:g}")


NEGATIVE = [(40, 40, 8, 8), (20, 36, 8, 16)]


@pytest.mark.parametrize(
    ("nq", "nk", "block_q", "block_k"), NEGATIVE, ids=[f"Nq{a}-Nk{b}" for a, b, _, _ in NEGATIVE]
)
def test_causal_scores_far_below_zero(
    forward: Fn, device: str, nq: int, nk: int, block_q: int, block_k: int
) -> None:
    """Causal, with q = -3000 k and positive keys: every visible score is about -12,000, so
    a masked score must stay below all of them (-inf), not at a finite value such as -1e4."""
    gen = torch.Generator().manual_seed(17)
    k = 1.0 + 0.1 * torch.randn((1, 2, nk, 16), generator=gen, dtype=torch.float64)
    v = torch.randn((1, 2, nk, 16), generator=gen, dtype=torch.float64)
    q = -3000.0 * k[..., nk - nq :, :]
    case = Case(q.to(device), k.to(device), v.to(device), True, block_q, block_k)
    message = None
    try:
        check_forward(call_forward(forward, case), case, "every visible score about -12,000")
    except pytest.fail.Exception as exc:
        message = str(exc.msg)
    if message is not None and message.startswith(("o = softmax", "lse must be")):
        pytest.fail(
            f"{message}; here every score a query may see is about -12,000: fill masked scores "
            "with -inf (or skip them), since a finite fill such as -1e4 is larger than those "
            "scores and the masked keys take over the softmax",
            pytrace=False,
        )
    if message is not None:
        pytest.fail(message, pytrace=False)


def test_float32_inputs(forward: Fn, device: str) -> None:
    case = make_case(
        2,
        2,
        30,
        50,
        16,
        causal=True,
        block_q=16,
        block_k=16,
        seed=9,
        dtype=torch.float32,
        device=device,
    )
    check_forward(call_forward(forward, case), case, "float32 inputs, float32 outputs")


MEMORY = [(False, 128, 128, False), (True, 128, 128, False), (True, 512, 32, True)]


@pytest.mark.parametrize(
    ("causal", "block_q", "block_k", "together"),
    MEMORY,
    ids=["full", "causal", "causal-bq512-bk32-alive-together"],
)
def test_never_materialises_the_score_matrix(
    forward: Fn, device: str, causal: bool, block_q: int, block_k: int, together: bool
) -> None:
    """Nq = Nk = 2048, d = 16: no tensor of Nq * Nk / 4 = 1,048,576 elements or more. With
    block_q = 512 and block_k = 32, not even all the tensors alive at one moment together: a
    row block of score tiles kept for a second pass (2,097,152 elements) is too many."""
    case = make_case(
        1,
        2,
        2048,
        2048,
        16,
        causal=causal,
        block_q=block_q,
        block_k=block_k,
        seed=11,
        device=device,
    )
    with Watch(query=(case.q,), key=(case.k, case.v)) as seen:
        got = call_forward(forward, case)
    no_square_tensors(seen, case, "flash_attention_forward")
    if together:
        live_storage(seen, case, "flash_attention_forward")
    check_forward(got, case)


# ---------------------------------------------------------------- GPU


@pytest.mark.cuda
def test_larger_case_on_gpu(forward: Fn, device: str, record_metric: Callable[..., None]) -> None:
    """B = 2, H = 8, N = 1024, d = 64 in float32 on the GPU; the time against PyTorch's fused
    scaled_dot_product_attention is reported, not graded."""
    case = make_case(
        2,
        8,
        1024,
        1024,
        64,
        causal=True,
        block_q=128,
        block_k=128,
        seed=13,
        dtype=torch.float32,
        device=device,
    )
    check_forward(call_forward(forward, case), case, "on the GPU")
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(3):
        forward(case.q, case.k, case.v, **case.kwargs)
    torch.cuda.synchronize()
    yours = (time.perf_counter() - start) / 3
    sdpa = torch.nn.functional.scaled_dot_product_attention
    sdpa(case.q, case.k, case.v, is_causal=True)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(3):
        sdpa(case.q, case.k, case.v, is_causal=True)
    torch.cuda.synchronize()
    fused = (time.perf_counter() - start) / 3
    record_metric("forward time / scaled_dot_product_attention", yours / fused, "x")
