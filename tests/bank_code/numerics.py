"""Comparisons shared by the behaviour tests of the bank's numeric answers."""

from __future__ import annotations

import torch

INF = float("inf")


def close(got: torch.Tensor, want: torch.Tensor, tol: float = 1e-5) -> None:
    """Equal within `tol` (absolute and relative), NaN matching NaN."""
    torch.testing.assert_close(got, want, rtol=tol, atol=tol, equal_nan=True)
