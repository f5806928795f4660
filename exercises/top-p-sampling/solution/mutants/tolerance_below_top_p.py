# mutant: a token is dropped once the mass before it is within 1e-6 of top_p (a tolerance in the comparison)
"""Batched temperature / top-k / top-p (nucleus) sampling for one decode step.

Every row of the batch is a sequence with its own sampling parameters. The pipeline per row:
divide the logits by the temperature, softmax, keep the top_k most probable tokens, keep the
nucleus (the shortest run of the most probable remaining tokens whose renormalised mass
reaches top_p), renormalise, draw. A temperature of 0 means greedy decoding.

One sort serves both filters: after a stable sort on descending probability, top-k keeps the
first k ranks and top-p keeps a prefix of what is left, so both are masks over ranks. The
stable sort makes equal probabilities keep their vocabulary order: the lower token id wins.
"""

import torch


def filter_probs(
    logits: torch.Tensor,
    temperature: torch.Tensor,
    top_k: torch.Tensor,
    top_p: torch.Tensor,
) -> torch.Tensor:
    """The distribution each row is sampled from: [B, V], dtype and device of ``logits``.

    temperature [B] (0 = greedy), top_k [B] (0 = off), top_p [B] in (0, 1] (1 = off).
    Removed tokens get exactly 0; every row sums to 1; ``logits`` is not modified.
    """
    vocab = logits.shape[-1]
    device, dtype = logits.device, logits.dtype
    temperature = temperature.to(device=device, dtype=dtype)
    top_p = top_p.to(device=device, dtype=dtype)
    top_k = top_k.to(device=device, dtype=torch.int64)
    greedy = temperature == 0

    # temperature scales the logits (greedy rows divide by 1 and are replaced at the end)
    scale = torch.where(greedy, torch.ones_like(temperature), temperature)
    probs = torch.softmax(logits / scale.unsqueeze(1), dim=-1)

    # most probable first; stable, so ties keep vocabulary order (lower token id first)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    rank = torch.arange(vocab, device=device).unsqueeze(0)

    # top-k: the first k ranks survive (k = 0 or k >= V keeps everything)
    k = torch.where(top_k > 0, top_k.clamp(max=vocab), torch.full_like(top_k, vocab))
    sorted_probs = sorted_probs.masked_fill(rank >= k.unsqueeze(1), 0.0)
    sorted_probs = sorted_probs / sorted_probs.sum(dim=-1, keepdim=True)

    # top-p on the renormalised top-k distribution: keep a token while the mass strictly
    # before it is below top_p, so the token that crosses top_p stays and rank 0 always stays
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs
    outside = (mass_before >= top_p.unsqueeze(1) - 1e-6) & (top_p < 1).unsqueeze(1)
    outside[:, 0] = False  # the first token is always kept
    sorted_probs = sorted_probs.masked_fill(outside, 0.0)
    sorted_probs = sorted_probs / sorted_probs.sum(dim=-1, keepdim=True)

    filtered = torch.zeros_like(probs).scatter_(1, order, sorted_probs)

    # greedy rows: all the mass on the first maximal logit
    one_hot = torch.zeros_like(probs).scatter_(1, logits.argmax(dim=-1, keepdim=True), 1.0)
    return torch.where(greedy.unsqueeze(1), one_hot, filtered)


def sample(
    logits: torch.Tensor,
    temperature: torch.Tensor,
    top_k: torch.Tensor,
    top_p: torch.Tensor,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One token id per row, drawn from ``filter_probs``: int64 [B] on the device of ``logits``."""
    probs = filter_probs(logits, temperature, top_k, top_p)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(1)
