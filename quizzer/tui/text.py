"""Text that has to fit a column."""

from __future__ import annotations


def fit(text: str, width: int) -> str:
    """`text` cut to `width` cells, with an ellipsis when it was cut."""
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"
