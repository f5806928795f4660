"""Behaviour tests for the Triton kernels of the bank (fuse, gemm, serv, kv topics), run on
the CPU by a small emulator: against torch on sizes that do not divide the block sizes, with
NaN in every cache slot a kernel must not read."""

from __future__ import annotations

import pytest
import torch

from tests.bank_code.blocks import load_block
from tests.bank_code.numerics import close
from tests.bank_code.triton_emulator import tl, triton

NAN = float("nan")


@pytest.mark.parametrize("n", [0, 1, 100, 128])
def test_vector_add_kernel(n: int) -> None:
    add = load_block("fuse-triton-vs-cuda", 0, triton=triton, tl=tl)["add_kernel"]
    x, y = torch.randn(n), torch.randn(n)
    out = torch.empty(n)
    add[(triton.cdiv(n, 32),)](x, y, out, n, BLOCK=32)
    close(out, x + y)


@pytest.mark.parametrize(("m", "n", "k"), [(1, 1, 1), (70, 50, 33), (128, 256, 64), (3, 130, 200)])
def test_tiled_matmul_kernel(m: int, n: int, k: int) -> None:
    matmul = load_block("gemm-triton-programming-model", 0, triton=triton, tl=tl)["matmul"]
    torch.manual_seed(m)
    a, b, c = torch.randn(m, k), torch.randn(k, n), torch.full((m, n), NAN)
    grid = lambda meta: (triton.cdiv(m, meta["BM"]), triton.cdiv(n, meta["BN"]))  # noqa: E731
    matmul[grid](a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride())
    close(c, a @ b, 1e-4)


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    if k.shape[0] == 0:
        return torch.zeros_like(q)
    return torch.softmax(q @ k.T * scale, -1) @ v


def test_paged_decode_kernel() -> None:
    paged = load_block("serv-pagedattention-triton", 0, triton=triton, tl=tl)["paged_decode"]
    torch.manual_seed(0)
    block, h_kv, g, d, n_blocks = 4, 2, 2, 8, 12
    seq_lens = torch.tensor([0, 1, 4, 9, 13])
    tables = torch.full((5, 4), 10**6)  # entries past a sequence's end point nowhere
    free = torch.randperm(n_blocks)
    used = 0
    for s, length in enumerate(seq_lens.tolist()):
        need = -(-length // block)
        tables[s, :need] = free[used : used + need]
        used += need
    k_cache = torch.full((n_blocks * block, h_kv, d), NAN)  # unwritten slots hold NaN
    v_cache = torch.full((n_blocks * block, h_kv, d), NAN)
    keys = {}
    for s, length in enumerate(seq_lens.tolist()):
        slots = torch.tensor(
            [int(tables[s, p // block]) * block + p % block for p in range(length)],
            dtype=torch.long,
        )
        k_cache[slots], v_cache[slots] = torch.randn(length, h_kv, d), torch.randn(length, h_kv, d)
        keys[s] = slots
    q = torch.randn(5, h_kv, g, d)
    out = torch.full_like(q, NAN)
    scale = d**-0.5
    paged[(5, h_kv)](
        q,
        k_cache,
        v_cache,
        tables,
        seq_lens,
        out,
        scale,
        tables.stride(0),
        H_KV=h_kv,
        G=g,
        BLOCK=block,
        D=d,
    )
    for s in range(5):
        for kvh in range(h_kv):
            k, v = k_cache[keys[s], kvh], v_cache[keys[s], kvh]
            close(out[s, kvh], _attend(q[s, kvh], k, v, scale), 1e-5)


def test_sparse_decode_kernel() -> None:
    sparse = load_block("kv-sparse-compute-without-masking", 0, triton=triton, tl=tl)[
        "sparse_decode"
    ]
    torch.manual_seed(0)
    block, d, n_blocks, h, max_sel = 4, 8, 6, 3, 3
    k_cache = torch.randn(n_blocks, block, d)
    v_cache = torch.randn(n_blocks, block, d)
    sel = torch.tensor([[5, 0, 0], [1, 3, 0], [2, 4, 1], [0, 0, 0], [3, 2, 0], [1, 0, 0]])
    sel_len = torch.tensor([[4, 0, 0], [2, 4, 0], [4, 1, 3], [0, 0, 0], [0, 3, 0], [0, 0, 0]])
    n_sel = torch.tensor([1, 2, 3, 0, 2, 1])  # nothing selected; an empty block first; only empty
    for row, count in enumerate(n_sel.tolist()):  # junk past each block's filled slots
        for i in range(count):
            k_cache[sel[row, i], sel_len[row, i] :] = NAN
            v_cache[sel[row, i], sel_len[row, i] :] = NAN
    q = torch.randn(6, d)
    out = torch.full((6, d), NAN)
    scale = d**-0.5
    sparse[(2, h)](
        q, k_cache, v_cache, sel, sel_len, n_sel, out, scale, H=h, MAX_SEL=max_sel, BLOCK=block, D=d
    )
    for row, count in enumerate(n_sel.tolist()):
        parts = [(sel[row, i], sel_len[row, i]) for i in range(count)]
        k = torch.cat([k_cache[b, :n] for b, n in parts]) if parts else torch.zeros(0, d)
        v = torch.cat([v_cache[b, :n] for b, n in parts]) if parts else torch.zeros(0, d)
        close(out[row], _attend(q[row], k, v, scale), 1e-5)


def test_emulator_refuses_unmasked_out_of_bounds_access() -> None:
    @triton.jit
    def overrun(x, n, BLOCK: tl.constexpr) -> None:
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x + offs, tl.load(x + offs) * 2)  # no mask: the tail program overruns

    with pytest.raises(IndexError):
        overrun[(2,)](torch.ones(6), 6, BLOCK=4)
