"""top-p-sampling: batched temperature / top-k / top-p (nucleus) sampling for one decode step.

Grade with:  quizzer exercise top-p-sampling --check
README.md (next to this file) states the exact rules, including how ties are broken.
"""

import torch


def filter_probs(
    logits: torch.Tensor,
    temperature: torch.Tensor,
    top_k: torch.Tensor,
    top_p: torch.Tensor,
) -> torch.Tensor:
    """The distribution each row is sampled from.

    logits      [B, V] float; not modified.
    temperature [B] float; 0 = greedy (probability 1 on the first maximal logit).
    top_k       [B] int; 0 = off, k >= V keeps everything.
    top_p       [B] float in (0, 1]; 1 = off.

    Returns [B, V] with the dtype and device of logits: removed tokens exactly 0, each row
    sums to 1. Per row: logits / T -> softmax -> keep the top_k most probable -> keep a token
    while the renormalised mass strictly before it (most probable first) is < top_p ->
    renormalise. Equal probabilities: the lower token id ranks first.
    """
    # TODO 1: temperature: divide the logits by T (not in place); greedy rows need care
    # TODO 2: softmax, then one stable sort on descending probability
    # TODO 3: top-k: a mask over ranks; renormalise what survives
    # TODO 4: top-p: mass before each token = cumulative sum minus itself; keep it while < top_p
    # TODO 5: renormalise, scatter back to vocabulary order; one-hot rows where T == 0
    raise NotImplementedError("filter_probs")


def sample(
    logits: torch.Tensor,
    temperature: torch.Tensor,
    top_k: torch.Tensor,
    top_p: torch.Tensor,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One token id per row drawn from filter_probs: int64 [B] on the device of logits.

    All randomness must come from ``generator`` (same seed, same tokens).
    """
    # TODO: draw from filter_probs(...) with torch.multinomial, using the generator
    raise NotImplementedError("sample")
