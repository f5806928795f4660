"""Meta-tests of layernorm, end to end through the runner, for both tracks: the reference and
every independently written alternative (solution/alternatives/, track by the file-name
prefix ``torch_`` / ``numba_``) pass, the starters fail, each mutant fails with a message
naming the broken property. The grader's float64 reference is checked against torch's own
layer_norm / rms_norm and autograd, and its watch against the shortcuts it must catch.

On a CPU the numba track runs in the numba-cuda simulator with the shared grader additions
(exercises/_cudakit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from quizzer.exercises.catalog import Mutant
from quizzer.exercises.runner import grade

from . import meta_tracks
from .meta import CATALOG, explain

EXERCISE = CATALOG.get("layernorm")
TRACKS = [t.name for t in EXERCISE.meta.tracks]
MUTANTS = EXERCISE.meta.mutants
ALTERNATIVES = sorted((EXERCISE.path / "solution" / "alternatives").glob("*.py"))
MIN_PASSED = {"torch": 45, "numba": 15}  # checks that run on a CPU, per track

pytestmark = pytest.mark.slow


def track_of(path: Path) -> str:
    return path.name.split("_", 1)[0]


@pytest.mark.parametrize("track", TRACKS)
def test_reference_passes(track: str) -> None:
    result = grade(EXERCISE, EXERCISE.solution_file(track), device="cpu", track=track)
    assert result.status == "passed", explain(result)
    assert result.device == "cpu"
    assert result.count("passed") >= MIN_PASSED[track], explain(result)
    gpu_only = [t for t in result.tests if t.outcome == "skipped" and "CUDA GPU" in t.message]
    assert len(gpu_only) == (1 if track == "numba" else 0), [t.name for t in gpu_only]


@pytest.mark.parametrize("path", ALTERNATIVES, ids=[p.name for p in ALTERNATIVES])
def test_alternative_solution_passes(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# alternative: "), path.name
    assert track_of(path) in TRACKS, f"{path.name}: name it torch_*.py or numba_*.py"
    result = grade(EXERCISE, path, device="cpu", track=track_of(path))
    assert result.status == "passed", explain(result)


def test_alternatives_cover_both_tracks() -> None:
    for track in TRACKS:
        assert sum(track_of(p) == track for p in ALTERNATIVES) >= 2, track


@pytest.mark.parametrize("track", TRACKS)
def test_starter_fails_as_not_implemented(track: str) -> None:
    result = grade(EXERCISE, EXERCISE.starter_file(track), device="cpu", track=track)
    assert result.status == "failed", explain(result)
    assert result.count("passed") == 0, explain(result)
    first = result.failures[0]
    assert "not implemented" in first.message, explain(result)


def test_every_mutant_file_is_listed() -> None:
    folder = EXERCISE.path / "solution" / "mutants"
    assert {m.file for m in MUTANTS} == {p.name for p in folder.iterdir()}
    for mutant in MUTANTS:
        assert mutant.track in TRACKS, mutant.file
        assert mutant.file.startswith("numba_") == (mutant.track == "numba"), mutant.file
        first = EXERCISE.mutant_file(mutant).read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# mutant: "), mutant.file


@pytest.mark.parametrize("mutant", meta_tracks.mutant_params(EXERCISE))
def test_mutant_fails_naming_the_property(mutant: Mutant) -> None:
    meta_tracks.check_mutant_fails(EXERCISE, mutant)


# ---------------------------------------------------------------- the grader's own parts


@pytest.mark.parametrize("shape", [(7,), (3, 33), (2, 3, 100)])
def test_grader_reference_agrees_with_torch(shape: tuple[int, ...]) -> None:
    import torch
    import torch.nn.functional as F

    ref = meta_tracks.grader_module(EXERCISE, "_ln_reference")
    gen = torch.Generator().manual_seed(len(shape))
    d = shape[-1]
    x = 5.0 + torch.randn(shape, generator=gen, dtype=torch.float64)
    w = 1 + 0.3 * torch.randn(d, generator=gen, dtype=torch.float64)
    b = torch.randn(d, generator=gen, dtype=torch.float64)
    dy = torch.randn(shape, generator=gen, dtype=torch.float64)
    y, mean, rstd = ref.layer_norm(x, w, b, 1e-3)
    assert torch.allclose(y, F.layer_norm(x, (d,), w, b, 1e-3), atol=1e-12, rtol=0)
    assert torch.allclose(mean, x.mean(-1), atol=1e-12, rtol=0)
    var = x.var(-1, correction=0)
    assert torch.allclose(rstd, (var + 1e-3).rsqrt(), atol=1e-12, rtol=0)
    y_rms, _ = ref.rms_norm(x, w, 1e-3)
    assert torch.allclose(y_rms, F.rms_norm(x, (d,), w, 1e-3), atol=1e-12, rtol=0)

    xs, ws, bs = (t.clone().requires_grad_() for t in (x, w, b))
    F.layer_norm(xs, (d,), ws, bs, 1e-3).backward(dy)
    got = ref.layer_norm_grads(dy, x, w, b, 1e-3)
    for mine, theirs in zip(got, (xs.grad, ws.grad, bs.grad), strict=True):
        assert torch.allclose(mine, theirs, atol=1e-10, rtol=0)
    # the diagnosed dx variants really differ from the right dx (else a message would lie)
    for drop in ("mean", "rstd", "both"):
        alt = ref.dx_without(dy, x, w, 1e-3, drop)
        assert float((alt - got[0]).abs().max()) > 1e-3, drop
    full = ref.dx_without(dy, x, w, 1e-3, "none")
    assert torch.allclose(full, got[0], atol=1e-10, rtol=0)


def test_grader_watch_catches_the_shortcuts() -> None:
    import torch
    import torch.nn.functional as F

    harness = meta_tracks.grader_module(EXERCISE, "_torch_harness")
    x, w = torch.randn(3, 8), torch.ones(8)
    shortcuts = {
        "layer_norm": lambda: F.layer_norm(x, (8,), w),
        "rms_norm": lambda: F.rms_norm(x, (8,), w),
        "var": lambda: x.var(-1),
        "std": lambda: torch.std(x, -1),
        "var_mean": lambda: torch.var_mean(x, -1),
        "native": lambda: torch.native_layer_norm(x, [8], w, None, 1e-5),
        "requires_grad": lambda: (x.clone().requires_grad_() * 2).sum().backward(),
        "autograd.grad": lambda: torch.autograd.grad(
            (x.detach().clone().requires_grad_(True) * 2).sum(), []
        ),
    }
    for name, call in shortcuts.items():
        with pytest.raises(harness.ForbiddenCall), harness.Watch("f"):
            call()
        assert name
    with harness.Watch("f"):  # ordinary reductions are fine
        centred = x - x.mean(-1, keepdim=True)
        (centred * centred).mean(-1).rsqrt()
        torch.einsum("nd,nd->d", x, x)
