# alternative: a Python loop over the batch rows (allowed by the README), each row
# filtered with one stable sort and sampled on its own
"""Sampling, one row at a time."""

import torch


def _filter_row(row: torch.Tensor, t: float, k: int, p: float) -> torch.Tensor:
    v = row.numel()
    if t == 0:
        out = torch.zeros_like(row)
        out[int(row.argmax())] = 1.0
        return out
    probs = torch.softmax(row / t, dim=0)
    vals, idx = torch.sort(probs, descending=True, stable=True)
    keep = v if k == 0 or k >= v else k
    vals = vals[:keep]
    idx = idx[:keep]
    vals = vals / vals.sum()
    if p < 1:
        before = torch.cumsum(vals, 0) - vals
        n = int((before < p).sum())  # `before` is non-decreasing: the survivors are a prefix
        vals = vals[: max(n, 1)]
        idx = idx[: max(n, 1)]
        vals = vals / vals.sum()
    out = torch.zeros_like(row)
    out[idx] = vals
    return out


def filter_probs(
    logits: torch.Tensor, temperature: torch.Tensor, top_k: torch.Tensor, top_p: torch.Tensor
) -> torch.Tensor:
    """Filtered distribution per row, computed row by row."""
    rows = [
        _filter_row(logits[i], float(temperature[i]), int(top_k[i]), float(top_p[i]))
        for i in range(logits.shape[0])
    ]
    if not rows:
        return torch.empty_like(logits)
    return torch.stack(rows)


def sample(
    logits: torch.Tensor,
    temperature: torch.Tensor,
    top_k: torch.Tensor,
    top_p: torch.Tensor,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One token per row."""
    out = torch.empty(logits.shape[0], dtype=torch.int64, device=logits.device)
    for i in range(logits.shape[0]):
        row = _filter_row(logits[i], float(temperature[i]), int(top_k[i]), float(top_p[i]))
        out[i] = torch.multinomial(row, 1, generator=generator)[0]
    return out
