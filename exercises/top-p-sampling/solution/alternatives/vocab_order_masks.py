# alternative: each token's rank computed in vocabulary order (the inverse of a stable
# argsort); the filters are masks there, nothing is scattered back
"""Sampling with masks kept in vocabulary order."""

import torch


def filter_probs(
    logits: torch.Tensor, temperature: torch.Tensor, top_k: torch.Tensor, top_p: torch.Tensor
) -> torch.Tensor:
    """Filtered distribution per row."""
    b, v = logits.shape
    dtype = logits.dtype
    temp = temperature.to(dtype)
    is_greedy = temp == 0
    safe_t = temp.masked_fill(is_greedy, 1.0)
    probs = (logits / safe_t.unsqueeze(1)).softmax(dim=1)
    order = probs.argsort(dim=1, descending=True, stable=True)
    rank = torch.empty_like(order).scatter_(
        1, order, torch.arange(v, device=logits.device).expand(b, v).contiguous()
    )
    k = top_k.clone()
    k[(k <= 0) | (k > v)] = v
    kept = rank < k.unsqueeze(1)
    probs = probs * kept
    probs = probs / probs.sum(dim=1, keepdim=True)
    in_order = probs.gather(1, order)
    mass_before = (in_order.cumsum(dim=1) - in_order).gather(1, rank)
    nucleus = (mass_before < top_p.to(dtype).unsqueeze(1)) | (top_p >= 1).unsqueeze(1)
    probs = probs * nucleus
    probs = probs / probs.sum(dim=1, keepdim=True)
    winner = logits.argmax(dim=1)
    greedy_rows = torch.nn.functional.one_hot(winner, v).to(dtype)
    return torch.where(is_greedy.unsqueeze(1), greedy_rows, probs)


def sample(
    logits: torch.Tensor,
    temperature: torch.Tensor,
    top_k: torch.Tensor,
    top_p: torch.Tensor,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One token per row."""
    return torch.multinomial(
        filter_probs(logits, temperature, top_k, top_p), num_samples=1, generator=generator
    )[:, 0]
