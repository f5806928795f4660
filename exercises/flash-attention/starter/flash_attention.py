"""flash-attention: the tiled FlashAttention forward pass and (part 2) its backward pass.

Grade with:  quizzer exercise flash-attention --check
README.md (next to this file) states the exact rules: shapes, the causal alignment, the
block sizes and what counts as materialising the N x N scores.
"""

import torch


def flash_attention_forward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    block_q: int = 64,
    block_k: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """o = softmax(q k^T / sqrt(d) [+ causal mask]) v, one score tile at a time.

    q [B, H, Nq, d], k and v [B, H, Nk, d], float32 or float64; not modified.
    causal: query i sees key j when j <= i + Nk - Nq (bottom-right); ValueError if Nq > Nk.
    block_q, block_k: every score tile has at most block_q queries and block_k keys.

    Returns (o [B, H, Nq, d], lse [B, H, Nq]) in q's dtype; lse[b, h, i] is the natural log of
    sum_j exp(s_ij) over the keys row i sees, s = q k^T / sqrt(d).
    """
    # TODO 1: ValueError for causal with Nq > Nk; scale = 1 / sqrt(d)
    # TODO 2: for each query tile: running max m = -inf, running sum l = 0, accumulator = 0
    # TODO 3: for each key tile: scores, mask, m_new, p = exp(s - m_new), rescale l and the
    #         accumulator by exp(m - m_new), add this tile's sum and p @ v_tile
    # TODO 4: o_tile = accumulator / l, lse_tile = m + log(l)
    raise NotImplementedError("flash_attention_forward")


def flash_attention_backward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    o: torch.Tensor,
    lse: torch.Tensor,
    do: torch.Tensor,
    causal: bool = False,
    block_q: int = 64,
    block_k: int = 64,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Part 2: (dq, dk, dv) of o = flash_attention_forward(q, k, v, causal)[0] for the
    upstream gradient do, from the saved o and lse, one score tile at a time.

    o and do [B, H, Nq, d], lse [B, H, Nq]; nothing is modified. Same causal rule and block
    sizes as the forward. Returns tensors shaped like q, k and v, in q's dtype.
    """
    # TODO 1: D = rowsum(do * o), once, before the loops
    # TODO 2: for each (key tile, query tile): s, mask, p = exp(s - lse_tile)
    # TODO 3: dv_tile += p^T do_tile; dp = do_tile v_tile^T; ds = p * (dp - D_tile)
    # TODO 4: dq_tile += scale * ds k_tile; dk_tile += scale * ds^T q_tile
    raise NotImplementedError("flash_attention_backward")
