"""Grader for rope: ``apply_rope(q, k, positions, base, layout, rotary_dim) -> (q_rot, k_rot)``.

Checks, most specific first: the form of the result and untouched inputs; ValueError for odd
rotary sizes; position 0 is the identity; lengths are kept; scores depend only on m - n; each
layout's pairing, the direction of rotation and the frequencies; positions with an offset and
per batch row; the pass-through tail of a partial rotary dim; many shapes against the float64
reference; no state kept between calls; tensors on the input's device (meta), positions
moved there from the CPU; float32, float16 and bfloat16 in tolerance; float16 and bfloat16
rotated in float32 (correctly rounded); positions up to 100,000; on a GPU, a larger case.
"""

from __future__ import annotations

import pytest
import torch
from _harness import (
    ATOL,
    PAIRING,
    Case,
    Rope,
    call,
    compare,
    make_case,
    named_mistake,
    on,
    reference,
    stale_call,
    stale_message,
    worst,
)
from _rope_reference import LAYOUTS, pair_indices

# ---------------------------------------------------------------- form


def test_returns_rotated_copies_of_the_same_form(apply_rope: Rope, device: str) -> None:
    """A tuple (q_rot, k_rot): shapes, dtype and device of q and k; inputs left alone."""
    for layout in LAYOUTS:
        call(apply_rope, make_case(2, 3, 5, 8, hk=1, device=device, layout=layout))
    call(apply_rope, make_case(2, 2, 4, 12, device=device, rotary_dim=4, positions=[3, 4, 5, 6]))


BAD = [
    (7, None, "half", "D = 7 is odd: features cannot be paired"),
    (8, 5, "half", "rotary_dim = 5 is odd"),
    (8, 10, "interleaved", "rotary_dim = 10 is larger than D = 8"),
    (8, 0, "half", "rotary_dim must be positive"),
    (8, None, "neox", "layout must be 'half' or 'interleaved'"),
]


@pytest.mark.parametrize(
    ("d", "rotary_dim", "layout", "reason"), BAD, ids=[b[3].split(":")[0] for b in BAD]
)
def test_rejects_bad_sizes(
    apply_rope: Rope, device: str, d: int, rotary_dim: int | None, layout: str, reason: str
) -> None:
    case = make_case(1, 1, 2, d, device=device, layout=layout, rotary_dim=rotary_dim)
    try:
        apply_rope(case.q, case.k, case.positions, **case.kwargs)
    except ValueError:
        return
    except NotImplementedError as exc:
        pytest.fail(
            f"apply_rope is not implemented yet (NotImplementedError: {exc})", pytrace=False
        )
    except Exception as exc:
        pytest.fail(
            f"apply_rope raised {type(exc).__name__}: {exc}; expected ValueError ({reason})",
            pytrace=False,
        )
    pytest.fail(f"apply_rope must raise ValueError: {reason} ({case.describe()})", pytrace=False)


STATE_CALLS = [
    {},
    {"base": 500000.0},
    {"positions": [50, 51, 52, 53]},
    {"layout": "interleaved"},
    {"rotary_dim": 4},
    {"positions": [[3, 4, 5, 6], [9, 10, 11, 12]]},
    {"dtype": torch.float32},
    {},
]


def test_no_state_kept_between_calls(apply_rope: Rope, device: str) -> None:
    """Calls of the same length T in a row: nothing computed for one call may leak into the
    next (a cache of cos / sin keyed on T alone does)."""
    earlier: list[Case] = []
    for i, change in enumerate(STATE_CALLS):
        args = {"positions": [3, 4, 5, 6], "base": 20000.0, **change}
        case = make_case(2, 2, 4, 8, seed=i, device=device, **args)
        got = call(apply_rope, case)
        want = reference(case, case.q)
        atol = ATOL[case.q.dtype]
        if worst(got[0], want)[0] > atol:
            named = named_mistake(got[0], case.q, case, atol)
            if named is not None:
                pytest.fail(named, pytrace=False)
            for old in earlier:
                stale = reference(on(old, q=case.q), case.q)
                if worst(got[0], stale)[0] <= atol < worst(stale, want)[0]:
                    pytest.fail(
                        f"results depend on an earlier call: call {i + 1} of a sequence with "
                        f"the same T ({case.describe()}) returned the rotation of an earlier "
                        f"call ({old.describe()}): compute cos and sin from this call's "
                        "positions, base, layout and sizes (no cache in a global variable "
                        "keyed on the length)",
                        pytrace=False,
                    )
        compare(got, case, f"call {i + 1} of a sequence of calls with the same T")
        earlier.append(case)


# ---------------------------------------------------------------- what a rotation is

LESS_PRECISE = (
    "the values are less precise than float64 allows: for float64 inputs compute the angles, "
    "cos and sin in float64 (the compute dtype is the wider of float32 and the input's dtype)"
)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_position_zero_is_the_identity(apply_rope: Rope, device: str, layout: str) -> None:
    case = make_case(2, 2, 3, 8, positions=[0, 0, 0], device=device, layout=layout)
    compare(
        call(apply_rope, case),
        case,
        "position 0 is a rotation by angle 0: q and k come back unchanged",
    )


@pytest.mark.parametrize("layout", LAYOUTS)
def test_keeps_the_length_of_every_head_vector(apply_rope: Rope, device: str, layout: str) -> None:
    case = make_case(
        2,
        3,
        6,
        16,
        positions=[[0, 1, 2, 7, 30, 500], [9, 8, 7, 6, 5, 4]],
        device=device,
        layout=layout,
    )
    for name, out, x in zip(("q", "k"), call(apply_rope, case), (case.q, case.k), strict=True):
        got = out.detach().cpu().double().norm(dim=-1)
        want = x.cpu().double().norm(dim=-1)
        err, (b, h, t) = worst(got, want)
        if err <= 1e-9:
            continue
        values = (
            f"the rotated {name} at batch {b}, head {h}, token {t} has norm "
            f"{float(got[b, h, t]):.10g}, the input {float(want[b, h, t]):.10g} "
            f"({case.describe()})"
        )
        if err < 1e-4:  # float64 inputs: a rotation done in float32 is this close
            pytest.fail(
                f"{LESS_PRECISE}: lengths are kept only to {err:.3g}: {values}", pytrace=False
            )
        pytest.fail(
            f"RoPE is a rotation and keeps lengths: {values}: both features of a pair must use "
            "the same angle, as (x1 cos - x2 sin, x1 sin + x2 cos)",
            pytrace=False,
        )


@pytest.mark.parametrize("layout", LAYOUTS)
def test_scores_depend_only_on_relative_position(
    apply_rope: Rope, device: str, layout: str
) -> None:
    """q at position m, k at position n: q_m . k_n is the same for (m + s, n + s)."""
    m = [0, 3, 5, 9, 2, 7]
    n = [0, 1, 5, 4, 6, 7]
    base = make_case(1, 1, len(m), 16, seed=5, device=device, layout=layout)
    # the same q vector and the same k vector at every token
    one = on(
        base,
        q=base.q[:, :, :1].expand_as(base.q).contiguous(),
        k=base.k[:, :, :1].expand_as(base.k).contiguous(),
    )
    scores = {}
    stale = None  # why a rotation is wrong: kept state or a known mistake
    for shift in (0, 4, 1000):
        for pos in (m, n):
            case = on(one, positions=torch.tensor(pos, device=device) + shift)
            out, _ = call(apply_rope, case)
            if stale is None and worst(out, reference(case, case.q))[0] > 1e-9:
                old = stale_call(out, case.q, case, 1e-9)
                stale = named_mistake(out, case.q, case, 1e-9) if old is None else None
                stale = stale_message(old, case) if old is not None else stale
            if pos is m:
                qm = out
            else:
                kn = out
        scores[shift] = (qm.double().cpu() * kn.double().cpu()).sum(-1)[0, 0]
    for shift in (4, 1000):
        err, (t,) = worst(scores[shift], scores[0])
        if err > 1e-9 and stale is not None:
            pytest.fail(stale, pytrace=False)
        if 1e-9 < err < 1e-4:
            pytest.fail(
                f"{LESS_PRECISE}: q_m . k_n changes by {err:.3g} when both positions shift by "
                f"{shift} ({one.describe()})",
                pytrace=False,
            )
        assert err <= 1e-9, (
            f"scores must depend only on m - n: q at position {m[t] + shift} . k at position "
            f"{n[t] + shift} is {float(scores[shift][t]):.10g}, but q at {m[t]} . k at {n[t]} is "
            f"{float(scores[0][t]):.10g} ({one.describe()}); rotate q and k the same way, each "
            "by its own position"
        )
    by_offset = {mi - ni: float(s) for mi, ni, s in zip(m, n, scores[0].tolist(), strict=True)}
    if len({round(v, 9) for v in by_offset.values()}) == 1 and stale is not None:
        pytest.fail(stale, pytrace=False)
    assert len({round(v, 9) for v in by_offset.values()}) > 1, (
        f"positions have no effect: q_m . k_n is {by_offset[0]:.6g} whatever m - n is "
        f"({one.describe()})"
    )


# ---------------------------------------------------------------- layout, direction, frequencies


@pytest.mark.parametrize("layout", LAYOUTS)
def test_layout_pairs_the_right_features(apply_rope: Rope, device: str, layout: str) -> None:
    """A one-hot q at position 1 may only move into its partner feature."""
    d = 8
    first, second = pair_indices(d, layout)
    partner = {**dict(zip(first, second, strict=True)), **dict(zip(second, first, strict=True))}
    q = torch.eye(d, dtype=torch.float64).reshape(1, d, 1, d).to(device)  # head j: feature j
    case = Case(q, q.clone(), torch.tensor([1], device=device), base=100.0, layout=layout)
    out, _ = call(apply_rope, case)
    got = out.detach().cpu().double()[0, :, 0]
    for j in range(d):
        moved = [f for f in range(d) if f != j and abs(float(got[j, f])) > 1e-12]
        if moved != [partner[j]]:
            other = "interleaved" if layout == "half" else "half"
            other_first, other_second = pair_indices(d, other)
            other_partner = {
                **dict(zip(other_first, other_second, strict=True)),
                **dict(zip(other_second, other_first, strict=True)),
            }
            if moved == [other_partner[j]]:
                pytest.fail(
                    f"the {layout} layout {PAIRING[layout]}; your output matches the {other} "
                    f"pairing: feature {j} turned into feature {moved[0]}, expected {partner[j]} "
                    f"(D = {d}, one-hot q at position 1)",
                    pytrace=False,
                )
            pytest.fail(
                f"the {layout} layout {PAIRING[layout]}: a one-hot q on feature {j} at position 1 "
                f"must turn into feature {partner[j]} only, it moved into {moved} (D = {d})",
                pytrace=False,
            )


@pytest.mark.parametrize("layout", LAYOUTS)
def test_rotates_counterclockwise(apply_rope: Rope, device: str, layout: str) -> None:
    """Pair 0 turns by exactly 1 radian per position for every base: (1, 0) -> (cos 1, sin 1)."""
    d = 4
    first, second = pair_indices(d, layout)
    q = torch.zeros(1, 1, 1, d, dtype=torch.float64)
    q[..., first[0]] = 1.0
    case = Case(q.to(device), q.clone().to(device), torch.tensor([1], device=device), layout=layout)
    out, _ = call(apply_rope, case)
    got = out.detach().cpu().double()[0, 0, 0]
    c, s = float(got[first[0]]), float(got[second[0]])
    want = torch.tensor(1.0, dtype=torch.float64)
    if abs(c - float(want.cos())) < 1e-9 and abs(s + float(want.sin())) < 1e-9:
        pytest.fail(
            "the rotation goes the wrong way (sin sign flipped): pair (x1, x2) at angle a becomes "
            f"(x1 cos a - x2 sin a, x1 sin a + x2 cos a); for (1, 0) at position 1 pair 0 gave "
            f"({c:.6f}, {s:.6f}), expected ({float(want.cos()):.6f}, {float(want.sin()):.6f}) "
            f"({case.describe()})",
            pytrace=False,
        )
    compare((out, out), on(case, k=case.q), "pair 0 turns by 1 radian per position (theta_0 = 1)")


FREQS = [(16, 10000.0), (16, 500000.0), (32, 10000.0), (6, 100.0)]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(("d", "base"), FREQS, ids=[f"D{d}-base{b:g}" for d, b in FREQS])
def test_frequencies_follow_the_base(
    apply_rope: Rope, device: str, layout: str, d: int, base: float
) -> None:
    case = make_case(1, 2, 4, d, positions=[1, 2, 7, 100], base=base, layout=layout, device=device)
    compare(call(apply_rope, case), case, "pair i turns by theta_i = base^(-2i/d) per position")


# ---------------------------------------------------------------- positions


CHUNKS = [[5, 1, 1, 3], [1] * 6, [4, 4]]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("chunks", CHUNKS, ids=["+".join(map(str, c)) for c in CHUNKS])
def test_decode_at_an_offset_matches_the_full_sequence(
    apply_rope: Rope, device: str, layout: str, chunks: list[int]
) -> None:
    """Prefill then decode with a KV cache: the tokens at T_past .. T_past + T - 1 get the
    same rotation as the same rows of one full-sequence call."""
    t = sum(chunks)
    full = make_case(2, 2, t, 8, hk=1, seed=t, device=device, layout=layout)
    want = call(apply_rope, full)
    compare(want, full, "positions 0 .. T-1: pair i of token m turns by m * theta_i")
    start = 0
    for size in chunks:
        part = on(
            full,
            q=full.q[:, :, start : start + size],
            k=full.k[:, :, start : start + size],
            positions=torch.arange(start, start + size, device=device),
        )
        got = call(apply_rope, part)
        compare(
            got,
            part,
            f"decoding at T_past = {start} must rotate by the given positions (chunks {chunks})",
        )
        start += size


def test_positions_per_batch_row(apply_rope: Rope, device: str) -> None:
    """[B, T] positions: every row of a batch is a sequence at its own offset (continuous
    batching), including rows that repeat a position (left padding)."""
    pos = [[17, 18, 19, 20], [0, 1, 2, 3], [1000, 1001, 1002, 1003], [0, 0, 0, 1]]
    for layout in LAYOUTS:
        case = make_case(4, 2, 4, 8, positions=pos, seed=11, device=device, layout=layout)
        compare(
            call(apply_rope, case),
            case,
            "positions [B, T]: token t of row b turns by positions[b, t] * theta_i",
        )
        decode = make_case(
            3, 2, 1, 8, positions=[[5], [0], [123]], seed=12, device=device, layout=layout
        )
        compare(
            call(apply_rope, decode), decode, "one decode step per row, each at its own position"
        )


def test_shared_positions_broadcast_over_the_batch(apply_rope: Rope, device: str) -> None:
    for layout in LAYOUTS:
        case = make_case(
            3, 2, 5, 8, positions=[4, 5, 6, 7, 8], seed=13, device=device, layout=layout
        )
        compare(call(apply_rope, case), case, "positions [T] are shared by every batch row")


# ---------------------------------------------------------------- partial rotary dim


PARTIAL = [(12, 4), (16, 8), (10, 2), (8, 8)]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(("d", "r"), PARTIAL, ids=[f"D{d}-r{r}" for d, r in PARTIAL])
def test_partial_rotary_dim(apply_rope: Rope, device: str, layout: str, d: int, r: int) -> None:
    """Features 0 .. r-1 are rotated as a head of size r; r .. D-1 pass through unchanged."""
    case = make_case(
        2,
        2,
        3,
        d,
        positions=[[2, 3, 9], [40, 41, 42]],
        rotary_dim=r,
        seed=d + r,
        device=device,
        layout=layout,
    )
    got = call(apply_rope, case)
    for name, out, x in zip(("q", "k"), got, (case.q, case.k), strict=True):
        if r < d and not torch.equal(out[..., r:].cpu(), x[..., r:].cpu()):
            err, _ = worst(out[..., r:], x[..., r:].cpu().double())
            pytest.fail(
                f"features rotary_dim .. D-1 ({r} .. {d - 1}) must pass through unchanged; the "
                f"rotated {name} changed them by up to {err:.3g} ({case.describe()})",
                pytrace=False,
            )
    compare(
        got,
        case,
        f"the first rotary_dim features form a head of size {r}: pairs and "
        f"theta_i = base^(-2i/{r}) over r",
    )


# ---------------------------------------------------------------- many shapes


SHAPES = [
    # B, Hq, Hk, T, D, positions
    (1, 1, 1, 1, 2, [[0]]),
    (1, 1, 1, 1, 64, [[4095]]),
    (1, 4, 4, 7, 8, None),
    (2, 4, 2, 9, 16, [list(range(3, 12)), list(range(100, 109))]),
    (3, 8, 1, 5, 32, [[0, 1, 2, 3, 4], [7, 8, 9, 10, 11], [2, 2, 3, 4, 5]]),
    (2, 2, 2, 16, 128, None),
    (1, 3, 1, 33, 6, None),
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    "shape", SHAPES, ids=[f"B{s[0]}-H{s[1]}-Hk{s[2]}-T{s[3]}-D{s[4]}" for s in SHAPES]
)
def test_matches_reference(
    apply_rope: Rope,
    device: str,
    layout: str,
    shape: tuple[int, int, int, int, int, list[list[int]] | None],
) -> None:
    b, hq, hk, t, d, pos = shape
    case = make_case(b, hq, t, d, hk=hk, positions=pos, seed=t * d, device=device, layout=layout)
    compare(call(apply_rope, case), case, f"the {layout} layout against the float64 reference")


def test_tensors_stay_on_the_input_device(apply_rope: Rope) -> None:
    """Inputs on PyTorch's meta device (shapes, no data): a tensor made on a fixed device (no
    device=, or device="cpu") then meets tensors on another device, also on a CPU-only
    machine."""
    for layout in LAYOUTS:
        for dtype in (torch.float32, torch.bfloat16):
            case = make_case(
                2,
                2,
                3,
                8,
                positions=[[5, 6, 7], [0, 1, 2]],
                layout=layout,
                device="meta",
                dtype=dtype,
            )
            try:
                call(apply_rope, case)
            except pytest.fail.Exception as exc:
                raise pytest.fail.Exception(
                    f"device: {exc.msg}: create every tensor on q.device (e.g. "
                    "torch.arange(..., device=q.device)) and move positions there",
                    pytrace=False,
                ) from None
    # positions given on the CPU while q and k are elsewhere (a GPU, here meta)
    case = make_case(2, 2, 3, 8, device="meta", dtype=torch.float32)
    case = on(case, positions=torch.tensor([[5, 6, 7], [0, 1, 2]]))
    try:
        call(apply_rope, case)
    except pytest.fail.Exception as exc:
        raise pytest.fail.Exception(
            f"device: {exc.msg}: positions may come on another device than q (here the CPU, "
            "q and k on meta): move positions to q.device (positions.to(q.device)) before "
            "computing the angles",
            pytrace=False,
        ) from None


# ---------------------------------------------------------------- precision


# |got - reference| allowed on inputs in [-1, 1] (see ATOL in _harness.py)
TOLERANCE = ATOL
LOW = ("float32", "float16", "bfloat16")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=LOW)
def test_low_precision_within_tolerance(apply_rope: Rope, device: str, dtype: torch.dtype) -> None:
    # odd positions above 2048 are not float16 numbers (spacing 2 there): rounding the
    # positions to the input dtype shows
    pos = [[0, 1, 2, 3, 500, 1000, 2047, 3001], [8, 9, 10, 11, 1500, 2501, 2600, 4096]]
    for layout in LAYOUTS:
        case = make_case(
            2,
            4,
            8,
            64,
            hk=2,
            positions=pos,
            uniform=True,
            seed=21,
            device=device,
            dtype=dtype,
            layout=layout,
        )
        got = call(apply_rope, case)
        for name, out, x in zip(("q", "k"), got, (case.q, case.k), strict=True):
            want = reference(case, x)
            err, (b, h, t, f) = worst(out, want)
            if err <= TOLERANCE[dtype]:
                continue
            named = named_mistake(out, x, case, TOLERANCE[dtype])
            if named is not None:
                pytest.fail(named, pytrace=False)
            early, _ = worst(out[..., :4, :], want[..., :4, :])
            type_name = str(dtype).removeprefix("torch.")
            where = (
                f"{name} at position {pos[b][t]}, feature {f}: "
                f"{float(out[b, h, t, f]):.6g}, expected {float(want[b, h, t, f]):.6g}"
            )
            if dtype != torch.float32 and early <= TOLERANCE[dtype]:
                pytest.fail(
                    f"{type_name} inputs: the error grows with the position (up to {err:.3g}, "
                    f"{TOLERANCE[dtype]:g} allowed; {where}), as with angles computed in "
                    f"{type_name}: compute positions * theta, cos and sin in float32 (at least), "
                    f"not in the input's half precision ({case.describe()})",
                    pytrace=False,
                )
            pytest.fail(
                f"{type_name} inputs: off by {err:.3g} ({TOLERANCE[dtype]:g} allowed) from the "
                f"float64 reference; {where} ({case.describe()})",
                pytrace=False,
            )


def ulp(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The spacing of ``dtype`` numbers in the binade of each value of x (float64)."""
    info = torch.finfo(dtype)
    _, exponent = torch.frexp(x)
    lowest = int(torch.tensor(info.tiny).log2())  # subnormals share the smallest spacing
    return torch.ldexp(torch.ones_like(x), (exponent - 1).clamp_min(lowest)) * info.eps


# A rotation computed in float32 and cast back once is within half a ULP of the exact value,
# plus the float32 error (about 2e-6 at these positions; measured at most 0.0022 ULP of 1.0 in
# float16 for the reference and every alternative). cos and sin cast to the input dtype and a
# rotation done in it are off by about half a ULP of 1.0 more (measured 0.56 to 0.61 in
# float16, 0.59 to 0.75 in bfloat16).
ROUNDING_SLACK = 1 / 16  # in ULPs of 1.0 of the input dtype


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=LOW[1:])
def test_half_precision_rotation_in_float32(
    apply_rope: Rope, device: str, dtype: torch.dtype
) -> None:
    """float16 / bfloat16 inputs: the rotation is computed in float32 and only its result is
    rounded to the input dtype, so every output is the exact value correctly rounded (within
    half a ULP, plus ROUNDING_SLACK for the float32 arithmetic)."""
    pos = [list(range(32)), [5 + 3 * t for t in range(32)]]
    type_name = str(dtype).removeprefix("torch.")
    one = torch.finfo(dtype).eps
    for layout in LAYOUTS:
        case = make_case(
            2,
            2,
            32,
            64,
            hk=1,
            positions=pos,
            uniform=True,
            seed=51,
            device=device,
            dtype=dtype,
            layout=layout,
        )
        got = call(apply_rope, case)
        for name, out, x in zip(("q", "k"), got, (case.q, case.k), strict=True):
            want = reference(case, x)
            err = (out.detach().cpu().double() - want).abs()
            excess = err - 0.5 * ulp(want, dtype)
            if float(excess.max()) <= ROUNDING_SLACK * one:
                continue
            if float(err.max()) > ATOL[dtype]:  # not a rounding matter
                named = named_mistake(out, x, case, ATOL[dtype])
                pytest.fail(
                    named
                    or f"{type_name} inputs: the rotated {name} is off by {float(err.max()):.3g} "
                    f"({ATOL[dtype]:g} allowed) from the float64 reference ({case.describe()})",
                    pytrace=False,
                )
            at = tuple(
                int(i) for i in torch.unravel_index(torch.tensor(int(excess.argmax())), err.shape)
            )
            b, _, t, f = at
            pytest.fail(
                f"{type_name} inputs: the rotation is not computed in float32: the rotated "
                f"{name} at position {pos[b][t]}, feature {f} is {float(out[at]):.6g}, the "
                f"exact value {float(want[at]):.6g} rounds to {float(want[at].to(dtype)):.6g} "
                f"(off by {float(err[at] / ulp(want[at], dtype)):.2f} ULP of {type_name}; a "
                "float32 rotation cast back once is within 0.5 ULP): compute cos, sin and "
                "(x1 cos - x2 sin, x1 sin + x2 cos) in float32 and cast only the result to "
                f"{type_name}; do not cast cos and sin to the input dtype ({case.describe()})",
                pytrace=False,
            )


LARGE_TOLERANCE = {torch.float32: 1.5e-2, torch.float16: 1.5e-2, torch.bfloat16: 3e-2}


@pytest.mark.parametrize(
    "dtype", [torch.float64, torch.float32, torch.float16, torch.bfloat16], ids=["float64", *LOW]
)
def test_large_positions(apply_rope: Rope, device: str, dtype: torch.dtype) -> None:
    """Positions up to 100,000 (long context): float16 cannot even hold them, bfloat16 holds
    them only to a few hundred; float32 angles are good to about 1e-2 radian there."""
    pos = [[65000, 65504, 65520, 70000, 99999, 100000], [4096, 8191, 16384, 32768, 50000, 77777]]
    for layout in LAYOUTS:
        case = make_case(
            2,
            2,
            6,
            64,
            positions=pos,
            uniform=True,
            seed=31,
            device=device,
            dtype=dtype,
            layout=layout,
        )
        got = call(apply_rope, case)
        if dtype == torch.float64:
            compare(
                got,
                case,
                "float64 at positions up to 100,000 (for float64 inputs compute the angles in "
                "float64: float32 angles are off by up to 1e-2 radian here)",
                atol=1e-9,
            )
            continue
        for name, out, x in zip(("q", "k"), got, (case.q, case.k), strict=True):
            err, (b, _, t, f) = worst(out, reference(case, x))
            if err <= LARGE_TOLERANCE[dtype]:
                continue
            named = named_mistake(out, x, case, LARGE_TOLERANCE[dtype])
            if named is not None:
                pytest.fail(named, pytrace=False)
            type_name = str(dtype).removeprefix("torch.")
            values = (
                f"{type_name} inputs at large positions: the rotated {name} is off by {err:.3g} "
                f"({LARGE_TOLERANCE[dtype]:g} allowed) at position {pos[b][t]}, feature {f}"
            )
            # the same inputs at positions below 64: an error that shrinks there, for half
            # precision inputs, is the pattern of angles computed in that precision
            small = on(case, positions=case.positions % 64)
            small_out = call(apply_rope, small)[0 if name == "q" else 1]
            small_err = worst(small_out, reference(small, x))[0]
            if dtype in (torch.float16, torch.bfloat16) and small_err <= err / 4:
                pytest.fail(
                    f"{values}; the error grows with the position (the same inputs at positions "
                    f"below 64 are off by {small_err:.3g}): compute positions * theta, cos and sin "
                    "in float32 (at least), never in the input's half precision "
                    f"({case.describe()})",
                    pytrace=False,
                )
            pytest.fail(f"{values} ({case.describe()})", pytrace=False)


# ---------------------------------------------------------------- GPU


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
def test_larger_case_on_gpu(apply_rope: Rope, device: str, dtype: torch.dtype) -> None:
    """A Llama-sized head (D = 128, 32 query and 8 KV heads), prefill of 512 at per-row
    offsets, and a partial rotary dim of 64, on the GPU against float64 maths."""
    offsets = torch.tensor([0, 4096])[:, None]
    pos = offsets + torch.arange(512)[None]
    for layout, r in (("half", None), ("interleaved", 64)):
        case = make_case(
            2,
            32,
            512,
            128,
            hk=8,
            positions=pos,
            uniform=True,
            seed=41,
            device=device,
            dtype=dtype,
            layout=layout,
            rotary_dim=r,
        )
        got = call(apply_rope, case)
        for name, out, x in zip(("q", "k"), got, (case.q, case.k), strict=True):
            err, _ = worst(out, reference(case, x))
            assert err <= TOLERANCE[dtype], (
                f"on the GPU: the rotated {name} is off by {err:.3g} ({case.describe()})"
            )
