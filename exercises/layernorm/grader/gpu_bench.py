"""The GPU-only timing of the numba LayerNorm kernel against torch's, in the same run."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

ROWS, D, THREADS = 8192, 4096, 256
RUNS = 20
MIN_RATIO = 0.2  # of torch.nn.functional.layer_norm's speed


def _median_s(fn: Callable[[], Any], sync: Callable[[], None]) -> float:
    fn()
    sync()  # warm-up: compilation and first-touch costs stay out of the timing
    times = []
    for _ in range(RUNS):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def compare_with_torch(ln: Callable[..., Any], cuda: ModuleType, record_metric: Any) -> None:
    """Check the result on the big case, then time both; fail below MIN_RATIO of torch."""
    import torch
    import torch.nn.functional as F

    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(ROWS, D, device="cuda", generator=gen) + 3.0
    w = 1 + 0.3 * torch.randn(D, device="cuda", generator=gen)
    b = 0.2 * torch.randn(D, device="cuda", generator=gen)
    y = torch.full_like(x, float("nan"))
    mean = torch.full((ROWS,), float("nan"), device="cuda")
    rstd = torch.full_like(mean, float("nan"))
    args = [cuda.as_cuda_array(t) for t in (x, w, b, y, mean, rstd)]

    def mine() -> None:
        """One call of the user's kernel on the big case."""
        ln(*args, 1e-5, THREADS)

    mine()
    torch.cuda.synchronize()
    want = F.layer_norm(x.double(), (D,), w.double(), b.double(), 1e-5)
    err = float((y.double() - want).abs().max())
    assert err < 1e-3, f"on the GPU, y is off by {err:.3g} from float64 (8192 x 4096, float32)"
    ours = _median_s(mine, torch.cuda.synchronize)
    theirs = _median_s(lambda: F.layer_norm(x, (D,), w, b, 1e-5), torch.cuda.synchronize)
    ratio = theirs / ours
    gbps = 2 * x.numel() * 4 / ours / 1e9  # read x once, write y once
    record_metric("layer_norm_forward bandwidth", gbps, "GB/s")
    record_metric("speed relative to torch layer_norm", ratio, "x")
    assert ratio >= MIN_RATIO, (
        f"layer_norm_forward takes {ours * 1e6:.0f} us for 8192 x 4096 float32, torch "
        f"{theirs * 1e6:.0f} us ({ratio:.2f}x of torch's speed, at least {MIN_RATIO} asked): "
        f"read each row with coalesced loads (neighbouring threads, neighbouring columns) and "
        "keep the block's threads busy (256 threads per row)"
    )
