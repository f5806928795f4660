"""Grader for gptq: ``gptq_quantize(W, H, bits, group_size, block_size, percdamp, act_order)``
returning ``(Q, loss)``.

Checks, cheapest first: the interface; a clear error for a singular H; a float64 W computed
in float64; a diagonal H gives round-to-nearest (RTN) exactly; every entry on its group's
grid; on correlated calibration inputs the output error is <= 0.5x RTN and act-order is <=
plain; the float64 loss identity sum(err^2)/2 = 0.5 tr((W-Q)(H+lambda I)(W-Q)^T); the result
does not depend on block_size; agreement with the grader's own implementation on >= 99.9% of
entries; the counted work of the lazy batch and no per-column host syncs; edge cases. Runs
on the GPU when the device is cuda.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import gptq_reference as ref
import pytest
import torch
from gptq_data import layer
from gptq_work import CountWork

Gptq = Callable[..., tuple[torch.Tensor, float]]
AGREE = 0.999  # ties in rounding flip a few entries, so never ask for exact equality


def run(gptq: Gptq, W: torch.Tensor, H: torch.Tensor, **kw) -> tuple[torch.Tensor, float]:
    """Call the user's function, check the result's form and that the inputs are untouched."""
    W0, H0 = W.clone(), H.clone()
    args = ", ".join(f"{k}={v}" for k, v in kw.items()) or "defaults"
    try:
        out = gptq(W, H, **kw)
    except NotImplementedError as exc:
        pytest.fail(f"gptq_quantize is not implemented yet ({exc})", pytrace=False)
    except Exception as exc:
        pytest.fail(f"gptq_quantize({args}) raised {type(exc).__name__}: {exc}", pytrace=False)
    if not (isinstance(out, tuple) and len(out) == 2):
        pytest.fail(f"gptq_quantize must return (Q, loss), got {type(out).__name__}")
    Q, loss = out
    assert isinstance(Q, torch.Tensor), f"Q must be a torch.Tensor, got {type(Q).__name__}"
    assert Q.shape == W.shape, f"Q has shape {tuple(Q.shape)}, W has {tuple(W.shape)} ({args})"
    assert Q.dtype == W.dtype, f"Q has dtype {Q.dtype}, expected W's dtype {W.dtype}"
    assert Q.device == W.device, f"Q is on {Q.device}, W is on {W.device}: keep Q on W's device"
    assert torch.isfinite(Q).all(), f"Q has NaN or inf entries ({args})"
    assert torch.equal(W, W0), "gptq_quantize modified W in place: work on a copy (step 1)"
    assert torch.equal(H, H0), (
        "gptq_quantize modified H in place (e.g. the dead-input fix or the damping written into "
        "the caller's H): work on a copy (step 1)"
    )
    return Q, float(loss)


def close(a: torch.Tensor, b: torch.Tensor, scale: float, tol: float = 1e-4) -> torch.Tensor:
    """Entries equal up to ``tol * scale`` (1e-4: float noise, far below one grid step)."""
    return (a.double() - b.double()).abs() <= tol * scale


def agreement(a: torch.Tensor, b: torch.Tensor, scale: float) -> float:
    """Fraction of entries equal up to float noise (far below one grid step)."""
    return float(close(a, b, scale).double().mean())


def groups(cols: int, group_size: int, perm: torch.Tensor) -> list[torch.Tensor]:
    """Original column indices of each group, groups being consecutive in processing order."""
    size = cols if group_size == -1 else group_size
    return [perm[g : g + size] for g in range(0, cols, size)]


def loss_trace(
    W: torch.Tensor,
    H: torch.Tensor,
    Q: torch.Tensor,
    percdamp: float = 0.01,
    damp_from_raw: bool = False,
    dead_diag: float = 1.0,
    zero_dead: bool = True,
) -> float:
    """0.5 tr((W'-Q)(H'+lambda I)(W'-Q)^T) in the original column order (the trace does not
    depend on the order): W' and H' after the dead-input fix, lambda from their mean diagonal.
    The keywords build the wrong variants a failure message can name."""
    W, H, Q = W.double().clone(), H.double().clone(), Q.double()
    dead = torch.nonzero(torch.diagonal(H) == 0).flatten()
    raw_mean = float(torch.diagonal(H).mean())
    H[dead, dead] = dead_diag
    if zero_dead:
        W[:, dead] = 0.0
    damp = percdamp * (raw_mean if damp_from_raw else float(torch.diagonal(H).mean()))
    H += damp * torch.eye(H.shape[0], dtype=H.dtype, device=H.device)
    delta = W - Q
    return 0.5 * float(torch.trace(delta @ H @ delta.T))


def off_grid_rows(Q: torch.Tensor, cols: torch.Tensor, bits: int) -> torch.Tensor:
    """Rows whose entries in ``cols`` are not on one grid s * (k - z), k = 0 .. 2^bits - 1:
    all gaps between sorted values must be integer multiples of one step s, spanning at most
    2^bits - 1 steps."""
    maxq = 2**bits - 1
    values = Q[:, cols].double().sort(dim=1).values
    gaps = values.diff(dim=1)
    span = values[:, -1] - values[:, 0]
    positive = torch.where(gaps > 0, gaps, torch.full_like(gaps, float("inf")))
    smallest = positive.min(dim=1).values
    ok = ~torch.isfinite(smallest)  # a single level
    for m in range(1, maxq + 1):  # the step may be a fraction of the smallest gap
        step = smallest / m
        ratio = gaps / step[:, None]
        whole = ((ratio - ratio.round()).abs() <= 1e-3 * ratio.clamp(min=1)).all(dim=1)
        ok |= whole & (span / step <= maxq + 0.5)  # float32 noise: ~maxq^2 * 1e-7 steps
        if bool(ok.all()):
            break
    return torch.nonzero(~ok).flatten()


# ---------------------------------------------------------------- interface and errors


def test_returns_q_and_loss(gptq: Gptq, dev: torch.device) -> None:
    W, H, _ = layer(32, 64, seed=1, device=dev)
    _, loss = run(gptq, W, H, bits=4, group_size=32, block_size=32)
    assert loss >= 0.0, f"loss (sum of err^2 / 2) must be >= 0, got {loss}"


def test_singular_hessian_gives_clear_error(gptq: Gptq, dev: torch.device) -> None:
    """H = 4 * ones is singular; with percdamp=0 Cholesky fails. Say so, suggest damping."""
    W, _, _ = layer(8, 16, seed=2, device=dev)
    H = torch.full((16, 16), 4.0, device=dev)
    try:
        gptq(W, H, bits=4, group_size=-1, block_size=16, percdamp=0.0)
    except ValueError as exc:
        assert "percdamp" in str(exc), f"the ValueError should suggest a larger percdamp: {exc}"
        return
    except NotImplementedError as exc:
        pytest.fail(f"gptq_quantize is not implemented yet ({exc})", pytrace=False)
    except Exception as exc:
        pytest.fail(
            f"a singular H with percdamp=0 raised {type(exc).__name__}: {exc}; raise a "
            "ValueError that says H is not positive definite and suggests a larger percdamp",
            pytrace=False,
        )
    pytest.fail("a singular H with percdamp=0 must raise ValueError (not positive definite)")


def test_float64_input_is_computed_in_float64(gptq: Gptq, dev: torch.device) -> None:
    """A float64 W must be quantized in float64 (step 1), not in float32 and cast back. One
    grid per row and one block, so that only precision can differ: Q must match the grader's
    float64 GPTQ to ~1e-9 (float32 rounding is ~1e-7), not be exactly representable in
    float32, and the loss must meet its identity to 1e-9."""
    W, H, _ = layer(64, 128, seed=13, device=dev, dtype=torch.float64)
    Q, loss = run(gptq, W, H, bits=4, group_size=-1, block_size=128)
    R, _ = ref.gptq_reference(W, H, bits=4, group_size=-1)
    scale = float(W.abs().max())
    loose = close(Q, R, scale)
    share = float((close(Q, R, scale, tol=1e-9) & loose).sum()) / max(int(loose.sum()), 1)
    why = []
    if bool((Q.float().double() == Q).all()):
        why.append("every entry of Q is exactly representable in float32")
    if share < 0.9:
        why.append(
            f"only {100 * share:.1f}% of the entries that match the grader's float64 GPTQ "
            "match it to 1e-9"
        )
    gap = abs(loss - loss_trace(W, H, Q)) / loss_trace(W, H, Q)
    if 1e-9 < gap < 1e-4:  # larger gaps: a wrong formula, reported by the loss identity check
        why.append(f"the loss misses 0.5 tr((W-Q)(H+lambda I)(W-Q)^T) by {gap:.1e} relative")
    assert not why, (
        f"float64 W: the result carries float32 rounding ({'; '.join(why)}): when W is "
        "float64 compute everything in float64, the damped H, its inverse and Cholesky "
        "factor and the column loop (README step 1)"
    )


# ---------------------------------------------------------------- properties


@pytest.mark.parametrize(("bits", "group_size"), [(4, 128), (3, -1)])
def test_diagonal_hessian_gives_round_to_nearest(
    gptq: Gptq, dev: torch.device, bits: int, group_size: int
) -> None:
    """Independent inputs: U is diagonal, no error moves, GPTQ must equal RTN."""
    W, _, _ = layer(64, 256, seed=3, device=dev)
    g = torch.Generator().manual_seed(3)
    H = torch.diag(torch.rand(256, generator=g) + 0.5).to(dev)
    Q, _ = run(gptq, W, H, bits=bits, group_size=group_size)
    same = agreement(Q, ref.rtn(W, bits, group_size), float(W.abs().max()) * 1e-2)
    assert same >= AGREE, (
        f"with a diagonal H (bits={bits}, group_size={group_size}) only {100 * same:.2f}% of Q "
        "equals round-to-nearest: with no correlation there is nothing to propagate, and the "
        "grid is asymmetric min-max per row and group (see the README)"
    )


GRID_CASES = [(4, 128, False), (4, 64, True), (2, 32, False), (3, -1, True), (8, 128, False)]


@pytest.mark.parametrize(("bits", "group_size", "act_order"), GRID_CASES)
def test_entries_on_group_grid(
    gptq: Gptq, dev: torch.device, bits: int, group_size: int, act_order: bool
) -> None:
    W, H, _ = layer(128, 256, seed=4, device=dev)
    Q, _ = run(gptq, W, H, bits=bits, group_size=group_size, act_order=act_order)
    perm = ref.prepare(W, H, 0.01, act_order).perm
    first = groups(256, group_size, perm)[0]
    scale, zero = ref.grid(W[:, first].double(), bits)
    levels = Q[:, first].double() / scale + zero
    wrong = (
        ((levels - levels.round()).abs() > 1e-3) | (levels < -1e-3) | (levels > 2**bits - 1 + 1e-3)
    )
    bad = torch.nonzero(wrong.any(dim=1)).flatten()
    assert bad.numel() == 0, (
        f"row {int(bad[0]) if bad.numel() else 0} of Q's first group (columns "
        f"{first[:4].tolist()}...; bits={bits}, group_size={group_size}, act_order={act_order}) "
        "is not on the min-max grid of those columns' weights: no column is updated before "
        "the first group starts, so its grid is quantize_params of W's first group_size "
        "columns (of the processing order); each group takes its own grid (README step 6)"
    )
    for cols in groups(256, group_size, perm):
        bad = off_grid_rows(Q, cols, bits)
        assert bad.numel() == 0, (
            f"row {int(bad[0])} of Q is not on one {bits}-bit grid within its group (columns "
            f"{cols[:4].tolist()}...; bits={bits}, group_size={group_size}, act_order="
            f"{act_order}): every entry must be scale * (k - zero), k in 0..{2**bits - 1}"
            + (", groups follow the act-order permutation" if act_order else "")
        )


def test_beats_rtn_on_correlated_inputs(gptq: Gptq, dev: torch.device) -> None:
    for seed in range(3):
        W, H, X = layer(256, 256, seed=10 + seed, device=dev)
        base = ref.output_error(W, ref.rtn(W, 4, 128), X)
        plain = ref.output_error(W, run(gptq, W, H, bits=4, group_size=128)[0], X)
        act = ref.output_error(W, run(gptq, W, H, bits=4, group_size=128, act_order=True)[0], X)
        assert plain <= 0.5 * base, (
            f"relative output error ||(W-Q)X||^2/||WX||^2 = {plain:.2e} is not <= 0.5 x "
            f"round-to-nearest ({base:.2e}) on correlated inputs (seed {seed}): the error "
            "compensation does not work; after column i is rounded the later columns must move "
            "by -err * U[i, i:] with U the upper Cholesky factor of (H + lambda I)^-1 and "
            "err = (w - q) / U[i, i]"
        )
        assert act <= plain, (
            f"act_order=True gives output error {act:.2e} > {plain:.2e} without it (seed "
            f"{seed}): quantize columns in order of descending diag(H)"
        )


@pytest.mark.parametrize("act_order", [False, True])
def test_loss_identity_float64(gptq: Gptq, dev: torch.device, act_order: bool) -> None:
    """sum(err^2)/2 over all columns = 0.5 tr((W-Q)(H+lambda I)(W-Q)^T), because W-Q = E U."""
    W, H, _ = layer(128, 256, seed=5, device=dev, dtype=torch.float64)
    H[7, :] = 0.0  # one dead input: its column of W counts as 0
    H[:, 7] = 0.0
    Q, loss = run(gptq, W, H, bits=4, group_size=64, block_size=64, act_order=act_order)
    expected = loss_trace(W, H, Q)
    gap = abs(loss - expected) / expected
    assert gap <= 1e-6, (
        f"loss identity broken (float64, act_order={act_order}): the returned sum(err^2)/2 = "
        f"{loss:.8g} but 0.5 tr((W-Q)(H+lambda I)(W-Q)^T) = {expected:.8g}, with W's dead "
        "column 7 zeroed, H[7, 7] = 1 and lambda = percdamp * mean(diag H) after that fix. "
        + loss_identity_cause(W, H, Q, loss, gap)
    )


def loss_identity_cause(
    W: torch.Tensor, H: torch.Tensor, Q: torch.Tensor, loss: float, gap: float
) -> str:
    """Name the cause when the loss meets the identity of a known wrong variant."""
    variants = [
        (
            {"damp_from_raw": True},
            "lambda = percdamp * mean(diag H) with the dead inputs' diagonal still 0 "
            "(step 2 sets it to 1 before step 4 damps)",
        ),
        ({"zero_dead": False}, "the dead input's column of W not zeroed (step 2: W[:, i] = 0)"),
    ]
    for kw, cause in variants:
        if abs(loss - loss_trace(W, H, Q, **kw)) <= 1e-9 * loss:
            return f"Your loss meets the identity for {cause}."
    if gap < 1e-4:
        return "The gap is at float32 rounding level: compute in float64 for a float64 W (step 1)."
    return (
        "It holds when err = (w - q) / U[i, i] with U the upper Cholesky factor of "
        "(H + lambda I)^-1 and every column's update (inside its block and, once per block, "
        "to the later columns: the lazy batch update) uses row i of that U."
    )


@pytest.mark.parametrize(("group_size", "block_sizes"), [(32, (32, 96, 256)), (128, (32, 256))])
def test_result_independent_of_block_size(
    gptq: Gptq, dev: torch.device, group_size: int, block_sizes: tuple[int, ...]
) -> None:
    """Blocks only batch the same updates: Q must not depend on block_size."""
    W, H, _ = layer(96, 256, seed=6, device=dev, dtype=torch.float64)
    results = {b: run(gptq, W, H, group_size=group_size, block_size=b)[0] for b in block_sizes}
    last = block_sizes[-1]
    for b in block_sizes[:-1]:
        same = agreement(results[b], results[last], float(W.abs().max()))
        assert same >= AGREE, (
            f"Q depends on block_size: block_size={b} and {last} agree on only "
            f"{100 * same:.2f}% of entries (group_size={group_size}); blocks only batch the same "
            "updates, so look at what happens at a block boundary: the later columns must get "
            "the block's errors (W[:, end:] -= Err_block @ U[block, end:]), a group's grid must "
            "come from its columns as they are now (all earlier updates applied, including "
            "those of its own block), and a group starts every group_size columns of the whole "
            "processing order, not of the block"
        )


AGREE_CASES = [
    (4, 128, False),
    (4, 128, True),
    (3, 64, False),
    (2, 32, True),
    (8, -1, False),
    (4, -1, True),
]


@pytest.mark.parametrize(("bits", "group_size", "act_order"), AGREE_CASES)
def test_agrees_with_reference(
    gptq: Gptq, dev: torch.device, bits: int, group_size: int, act_order: bool
) -> None:
    W, H, _ = layer(128, 256, seed=7, device=dev, dtype=torch.float64)
    kw = {"bits": bits, "group_size": group_size, "act_order": act_order}
    Q, _ = run(gptq, W, H, **kw)
    R, _ = ref.gptq_reference(W, H, **kw)
    same = agreement(Q, R, float(W.abs().max()))
    assert same >= AGREE, (
        f"Q agrees with the grader's GPTQ on only {100 * same:.2f}% of entries (float64, {kw}); "
        f"expected >= {100 * AGREE:.1f}%"
    )


def test_float32_close_to_reference(gptq: Gptq, dev: torch.device) -> None:
    """float32 rounding flips a few ties, and each flip moves later columns: >= 99%."""
    W, H, _ = layer(128, 256, seed=8, device=dev)
    for act_order in (False, True):
        Q, _ = run(gptq, W, H, act_order=act_order)
        R, _ = ref.gptq_reference(W.double(), H.double(), act_order=act_order)
        same = agreement(Q, R, float(W.abs().max()))
        assert same >= 0.99, (
            f"in float32 Q agrees with the grader's float64 GPTQ on only {100 * same:.2f}% "
            f"of entries (act_order={act_order}); compute in float32 at least"
        )


def test_lazy_batch_and_no_per_column_sync(gptq: Gptq, dev: torch.device) -> None:
    """Counted, not timed (the same on every machine): the elements the tensor ops write, and
    the device-to-host reads. Lazy batching writes ~out * in * (block + in / block) elements
    (rank-1 updates inside each block, one product per block for the later columns); rank-1
    updates of the whole matrix write ~out * in^2 (here 5x more); a .item() per column is
    one sync per column."""
    out, cols, block = 128, 256, 16
    W, _, _ = layer(out, cols, seed=14, device=dev)
    g = torch.Generator().manual_seed(14)
    A = torch.randn(cols, cols // 4, generator=g).to(dev)
    H = A @ A.T / cols + 0.1 * torch.eye(cols, device=dev)  # any H: the work does not depend on it
    with CountWork() as counter:
        run(gptq, W, H, bits=4, group_size=32, block_size=block)
    work, lazy = counter.work, out * cols * (block + cols / block)
    assert work.written <= 6 * lazy, (
        f"the updates wrote {work.written / lazy:.1f}x the elements that lazy batching needs "
        f"(out={out}, in={cols}, block_size={block}; correct solutions stay below 4x): apply a "
        "column's rank-1 update only to the rest of its block, and the block's errors to all "
        "later columns once, W[:, end:] -= Err_block @ U[block, end:] (README step 6, lazy "
        "batch update)"
    )
    assert work.syncs <= cols // 8, (
        f"{work.syncs} device-to-host reads (.item(), float(t), bool(t), if on a tensor) for "
        f"{cols} columns: keep per-column values on the device and convert once at the end "
        "(README Constraints: no per-column .item() calls)"
    )


# ---------------------------------------------------------------- edge cases


@pytest.mark.parametrize("act_order", [False, True])
def test_dead_inputs(gptq: Gptq, dev: torch.device, act_order: bool) -> None:
    """Dead inputs (diag(H) = 0) become H_ii = 1, W[:, i] = 0 before anything else. H is
    scaled so that the live diagonal lies on both sides of 1: under act_order the dead
    inputs then sort into the middle, not last."""
    W, H, _ = layer(64, 128, seed=9, device=dev, dtype=torch.float64)
    H = H / torch.diagonal(H).median()
    dead = [0, 5, 77]
    H[dead, :] = 0.0
    H[:, dead] = 0.0
    Q, _ = run(gptq, W, H, bits=4, group_size=64, act_order=act_order)
    assert bool((Q[:, dead] == 0).all()), (
        f"columns of dead inputs (diag(H) = 0: {dead}) must quantize to 0 (set H_ii = 1 and "
        f"W[:, i] = 0 first), got max |Q| {float(Q[:, dead].abs().max()):.3g}"
    )
    R, _ = ref.gptq_reference(W, H, bits=4, group_size=64, act_order=act_order)
    same = agreement(Q, R, float(W.abs().max()))
    assert same >= AGREE, (
        f"with dead inputs {dead} (act_order={act_order}) Q agrees with the grader's GPTQ on only "
        f"{100 * same:.2f}% of entries. The order of the steps matters: first H[i, i] = 1 and "
        "W[:, i] = 0 (step 2), then act_order sorts by the fixed diagonal, where a dead input "
        "has 1 (step 3), then lambda = percdamp * mean of the fixed diagonal (step 4). If the "
        "agreement checks without dead inputs fail too, the cause is elsewhere"
    )


@pytest.mark.parametrize("group_size", [64, 128, -1])
def test_in_features_not_multiple_of_block(gptq: Gptq, dev: torch.device, group_size: int) -> None:
    W, H, _ = layer(64, 200, seed=11, device=dev, dtype=torch.float64)
    Q, _ = run(gptq, W, H, bits=4, group_size=group_size, block_size=128)
    R, _ = ref.gptq_reference(W, H, bits=4, group_size=group_size)
    same = agreement(Q, R, float(W.abs().max()))
    head = agreement(Q[:, :128], R[:, :128], float(W.abs().max()))
    where = (
        "the first full block (columns 0-127) agrees, the partial last block (128-199) does not"
        if head >= AGREE
        else "already the first full block (columns 0-127) disagrees, so the cause is not "
        "the partial last block"
    )
    assert same >= AGREE, (
        f"in_features=200 with block_size=128, group_size={group_size}: Q agrees with the "
        f"grader's GPTQ on only {100 * same:.2f}% of entries; {where}"
    )
    for cols in groups(200, group_size, torch.arange(200, device=dev)):
        assert off_grid_rows(Q, cols, 4).numel() == 0, f"Q is off-grid in group {cols[:3]}..."


# ---------------------------------------------------------------- GPU


@pytest.mark.cuda
def test_large_layer_on_gpu(gptq: Gptq, dev: torch.device, record_metric) -> None:
    """A 4096 x 4096 layer in float32: close to the (float64) reference, well below RTN, and
    not much slower than the grader's unblocked float64 version."""
    W, H, X = layer(4096, 4096, seed=12, device=dev, n_samples=8192)
    run(gptq, W[:64], H)  # warm-up (kernels, cuSOLVER handles)
    torch.cuda.synchronize()
    start = time.perf_counter()
    Q, _ = run(gptq, W, H)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    R, _ = ref.gptq_reference(W.double(), H.double())
    torch.cuda.synchronize()
    ref_seconds = time.perf_counter() - start
    record_metric("gptq_4096x4096_time", seconds, "s")
    record_metric("reference_time", ref_seconds, "s")
    same = agreement(Q, R, float(W.abs().max()))
    record_metric("agreement_with_reference", 100 * same, "%")
    # float32 flips compound over 4096 columns (measured on CPU: 99.85% at 1024, 99.69% at 2048)
    assert same >= 0.98, f"4096 x 4096 float32: agreement with the reference {100 * same:.2f}%"
    error, base = ref.output_error(W, Q, X), ref.output_error(W, ref.rtn(W, 4, 128), X)
    assert error <= 0.5 * base, f"output error {error:.2e} is not <= 0.5 x RTN ({base:.2e})"
    assert seconds <= 5 * ref_seconds + 2.0, (
        f"{seconds:.1f} s for a 4096 x 4096 layer, the grader's unblocked float64 version takes "
        f"{ref_seconds:.1f} s: avoid per-column syncs (.item()), inverses or copies of the "
        "whole matrix"
    )
