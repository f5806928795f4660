"""The structural rules, read from a :class:`Watch` of one call: no fused attention kernel, no
softmax over a full row, score tiles of block_q x block_k, nothing of N x N size."""

from __future__ import annotations

import pytest
from _harness import Case
from _watch import Watch


def no_shortcuts(seen: Watch, case: Case, name: str) -> None:
    """No fused attention op and no softmax-like reduction over more than block_k keys."""
    if seen.fused:
        pytest.fail(
            f"{name} ran the fused attention op {seen.fused[0]} (as "
            "torch.nn.functional.scaled_dot_product_attention does): write the tiled loop "
            f"yourself ({case.describe()})",
            pytrace=False,
        )
    for op, shape, size in seen.reductions:
        if size > case.block_k:
            pytest.fail(
                f"{name} ran {op} over {size} entries (input shape {list(shape)}), more than "
                f"block_k = {case.block_k}: a softmax over the full row of keys needs the whole "
                "N x N row of scores; combine key tiles with the online softmax (running max "
                f"and sum) instead ({case.describe()})",
                pytrace=False,
            )


def _orientation(rows: str | None, cols: str | None) -> str | None:
    """ "q" when a tile's rows are queries (Q_i K_j^T, dO_i V_j^T), "k" when they are keys
    (K_j Q_i^T), None when the watch cannot tell."""
    if rows == "query" and cols == "key":
        return "q"
    if rows == "key" and cols == "query":
        return "k"
    return None


def score_tiles(seen: Watch, case: Case, name: str) -> None:
    """Every matrix product whose result's last dimension is not d is a score tile (S, S^T,
    dP or dP^T): it must fit in block_q x block_k, and full tiles must be used. When the watch
    can tell which operand came from the queries, the queries must be the block_q side."""
    no_shortcuts(seen, case, name)
    d, bq, bk = case.q.shape[-1], case.block_q, case.block_k
    tiles = [p for p in seen.products if len(p.shape) >= 2 and p.shape[-1] != d]
    if not tiles:
        pytest.fail(
            f"{name} computed no score tile with a matrix product: compute each tile as "
            f"q_tile @ k_tile.transpose(-1, -2) (or torch.matmul / torch.einsum) "
            f"({case.describe()})",
            pytrace=False,
        )
    full = False
    for tile in tiles:
        shape, side = tile.shape, _orientation(tile.rows, tile.cols)
        r, c = shape[-2:]
        queries, keys = (c, r) if side == "k" else (r, c)
        if side is None:
            fits = (r <= bq and c <= bk) or (r <= bk and c <= bq)
            full = full or (r, c) in ((bq, bk), (bk, bq))
        else:
            fits = queries <= bq and keys <= bk
            full = full or (queries, keys) == (bq, bk)
        if fits:
            continue
        if case.nk > bk and case.nk in (r, c):
            pytest.fail(
                f"{name} computed scores against all Nk = {case.nk} keys at once (a product "
                f"of shape {list(shape)}): that materialises the N x N score matrix, a row block "
                f"at a time at best; loop over K/V tiles of block_k = {bk} keys "
                f"({case.describe()})",
                pytrace=False,
            )
        if side is not None and queries <= bk and keys <= bq:
            pytest.fail(
                f"{name} swapped block_q and block_k: a score tile of shape {list(shape)} holds "
                f"{queries} queries (rows from q) and {keys} keys (from k), but a tile has at "
                f"most block_q = {bq} queries and block_k = {bk} keys; slice q with block_q "
                f"and k, v with block_k ({case.describe()})",
                pytrace=False,
            )
        pytest.fail(
            f"{name} computed a score tile of shape {list(shape)}, larger than block_q x block_k "
            f"= {bq} x {bk}: use the block sizes you are given (the last two dimensions of "
            f"q_tile @ k_tile^T must be at most block_q x block_k) ({case.describe()})",
            pytrace=False,
        )
    if not full:
        sizes = sorted({tuple(p.shape[-2:]) for p in tiles}, reverse=True)[:3]
        pytest.fail(
            f"{name} used score tiles of {sizes} only, never a full block_q x block_k = "
            f"{bq} x {bk} tile: use tiles of exactly block_q queries and block_k keys (only the "
            f"last ones may be shorter) ({case.describe()})",
            pytrace=False,
        )


def no_square_tensors(seen: Watch, case: Case, name: str) -> None:
    """No allocation of Nq * Nk / 4 elements or more, and no shortcut."""
    no_shortcuts(seen, case, name)
    limit = case.nq * case.nk // 4
    big = seen.largest
    if big.elements >= limit:
        pytest.fail(
            f"{name} created a tensor of {big.elements:,} elements (shape {list(big.shape)}, from "
            f"aten.{big.op}), at least Nq * Nk / 4 = {limit:,}: never materialise the N x N "
            "scores, P, or a mask of that size; keep one block_q x block_k tile at a time "
            f"({case.describe()})",
            pytrace=False,
        )


def live_storage(seen: Watch, case: Case, name: str) -> None:
    """All the tensors created by the call and alive at the same moment hold fewer than
    Nq * Nk / 4 elements together: an online softmax keeps a few tiles at a time, not a
    whole row block of score tiles."""
    limit = case.nq * case.nk // 4
    if seen.peak >= limit:
        row_block = case.q.shape[0] * case.q.shape[1] * case.block_q * case.nk
        pytest.fail(
            f"{name} held {seen.peak:,} elements in tensors alive at the same time (at "
            f"aten.{seen.peak_op}), at least Nq * Nk / 4 = {limit:,}, although each tensor may "
            f"be small: one row block of score tiles (B * H * block_q * Nk = {row_block:,}) "
            "kept for a softmax over the whole row is the N x N score matrix, a row block at a "
            "time; combine the tiles with the online softmax (running max m, sum l and "
            f"accumulator) and let each tile go before the next ({case.describe()})",
            pytrace=False,
        )
