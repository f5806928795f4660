"""spec-decode-sampling: the verification step of speculative decoding.

Grade with:  quizzer exercise spec-decode-sampling --check
README.md (next to this file) states the exact rules.
"""

import torch


def verify(
    draft_tokens: torch.Tensor,
    q: torch.Tensor,
    p: torch.Tensor,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Accept a prefix of the draft and emit exactly one more token, per row.

    draft_tokens [B, K] int64: the draft's tokens, x_i sampled from q[:, i].
    q            [B, K, V] float: the draft's distributions.
    p            [B, K+1, V] float: the target's distributions at the K positions plus one.

    Returns (tokens [B, K+1] int64 padded with -1, lengths [B] int64 in 1..K+1), on the
    device of p. Keep x_i with probability min(1, p_i(x_i) / q_i(x_i)); at the first
    rejection emit a token from norm(max(0, p_i - q_i)) (from p_i if that is all zero) and
    stop; if all K are kept, emit a bonus token from p[:, K]. All randomness from
    ``generator``; the inputs are not modified.
    """
    # TODO 1: gather p_i(x_i) and q_i(x_i); draw u uniform in [0, 1) with the generator
    # TODO 2: accepted prefix length n per row: the first rejection ends it
    # TODO 3: the distribution of the extra token: residual at a rejection, p[K] after all K
    # TODO 4: draw it, assemble tokens padded with -1, lengths = n + 1
    raise NotImplementedError("verify")


def verify_greedy(
    draft_tokens: torch.Tensor, p: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Temperature 0: keep x_i while x_i == argmax p_i; emit argmax p at the stop (or p[K]).

    Same shapes and return as ``verify``; argmax ties go to the lowest token id.
    """
    # TODO: argmax per position, accepted prefix, one extra argmax token
    raise NotImplementedError("verify_greedy")
