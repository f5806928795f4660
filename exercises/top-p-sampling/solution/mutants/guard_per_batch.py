# mutant: the top_p < 1 test is taken once for the whole batch (any row below 1 cuts every row), so a top_p = 1 row loses the tail the running sum rounds to 1
"""Batched temperature / top-k / top-p sampling, a typical candidate's vectorised version."""

import torch


def filter_probs(logits, temperature, top_k, top_p):  # type: ignore[no-untyped-def]
    """Filtered distribution per row."""
    B, V = logits.shape
    greedy = temperature == 0
    t = torch.where(greedy, torch.ones_like(temperature), temperature).to(logits.dtype)
    probs = torch.softmax(logits / t[:, None], dim=-1)
    sorted_p, order = torch.sort(probs, dim=-1, descending=True, stable=True)  # SORT
    ranks = torch.arange(V, device=logits.device)[None, :]
    k = torch.where(top_k == 0, torch.full_like(top_k, V), top_k)  # KZERO
    sorted_p = torch.where(ranks < k[:, None], sorted_p, torch.zeros_like(sorted_p))
    sorted_p = sorted_p / sorted_p.sum(dim=-1, keepdim=True)  # RENORM1
    before = sorted_p.cumsum(dim=-1) - sorted_p
    cut = before >= top_p[:, None].to(logits.dtype)  # CUTRULE
    if not bool((top_p < 1).any()):
        cut = torch.zeros_like(cut)
    sorted_p = torch.where(cut, torch.zeros_like(sorted_p), sorted_p)
    sorted_p = sorted_p / sorted_p.sum(dim=-1, keepdim=True)
    filtered = torch.zeros_like(probs).scatter_(1, order, sorted_p)
    one_hot = torch.zeros_like(probs).scatter_(1, logits.argmax(-1, keepdim=True), 1.0)
    return torch.where(greedy[:, None], one_hot, filtered)


def sample(logits, temperature, top_k, top_p, generator=None):  # type: ignore[no-untyped-def]
    """One token per row."""
    probs = filter_probs(logits, temperature, top_k, top_p)
    return torch.multinomial(probs, 1, generator=generator).squeeze(1)  # DRAW
