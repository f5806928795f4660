"""When a row's surviving tokens are wrong, name the rule its settings say is broken.

A row where only top-p acts on ``softmax(logits)`` (T = 1, top-k off, top_p < 1) whose
survivors are the nucleus less its last token, or plus the next one, broke the top-p
boundary whatever the check was about: the message gives that token's mass before it.
"""

from __future__ import annotations

import _sampling_reference as ref

# a mass before this close to top_p only differs from it by a tolerance, not by a rule
CLOSE = 1e-3


def boundary(
    got: list[int], want: ref.Row, temperature: float, top_k: int, top_p: float, where: str
) -> str | None:
    """The message for survivors ``got`` that miss the nucleus ``want`` by its edge token,
    or None when the row's settings or the difference say nothing about the boundary."""
    vocab = len(want.probs)
    if temperature != 1 or 0 < top_k < vocab or top_p >= 1:
        return None
    ranked, n = want.ranked, want.nucleus
    if n >= 2 and set(got) == set(ranked[: n - 1]):
        token, mass = ranked[n - 1], want.before[n - 1]
        return (
            f"top-p must keep the token that crosses top_p. For {where}: token {token} has "
            f"mass {mass:.15g} before it, which is < top_p{_gap(mass, top_p)}, so it stays "
            "(keep a token while the mass strictly before it is < top_p"
            f"{_exact(mass, top_p)})"
        )
    if n < len(ranked) and set(got) == set(ranked[: n + 1]):
        token, mass = ranked[n], want.before[n]
        if mass == top_p:
            return (
                f"a token whose mass before it equals top_p exactly is dropped. For {where}: "
                f"token {token} has mass {mass:.15g} before it, exactly top_p: the tokens "
                "before it already reach top_p"
            )
        return (
            f"top-p drops every token after the one that crosses top_p. For {where}: token "
            f"{token} has mass {mass:.15g} before it, which is >= top_p{_gap(mass, top_p)}, "
            "so it is dropped (keep a token only while the mass strictly before it is < "
            f"top_p{_exact(mass, top_p)})"
        )
    return None


def _gap(mass: float, top_p: float) -> str:
    return f" = {top_p:g} by {abs(mass - top_p):.2g}"


def _exact(mass: float, top_p: float) -> str:
    return ", compared exactly, with no tolerance" if abs(mass - top_p) < CLOSE else ""
