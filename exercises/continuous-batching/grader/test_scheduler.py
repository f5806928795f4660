"""Grader for continuous-batching, part 1: targeted scenarios, each built to exercise one
rule of the README's policy. Every scenario runs through _cb_check, which checks all the
invariants after every schedule() and on_step_done() against the model in _cb_model."""

from __future__ import annotations

from types import ModuleType

import pytest
from _cb_check import Checker, Violation, Workload, run


def W(bs: int, blocks: int, budget: int, seqs: int, *reqs: tuple[int, int, int]) -> Workload:
    """A workload; each request is (prompt_len, max_new_tokens, arrival step), ids r0, r1..."""
    return Workload(bs, blocks, budget, seqs, tuple((f"r{i}", *r) for i, r in enumerate(reqs)))


SCENARIOS: dict[str, tuple[str, Workload]] = {
    "single-request": (
        "one request: its prompt in one step, then one decode token a step",
        W(4, 8, 16, 4, (5, 3, 0)),
    ),
    "chunked-prefill": (
        "a prompt longer than the budget is split into chunks; no token before its last chunk",
        W(4, 8, 4, 4, (10, 2, 0)),
    ),
    "shared-budget": (
        "two prompts share one step's budget: the second gets what the first leaves",
        W(4, 16, 8, 4, (6, 2, 0), (6, 2, 0)),
    ),
    "decode-first": (
        "a decoding request keeps decoding every step while a long prompt is chunked",
        W(4, 16, 4, 4, (3, 6, 0), (12, 2, 2)),
    ),
    "max-num-seqs": (
        "at most max_num_seqs requests run; the third waits for a seat",
        W(4, 32, 32, 2, (4, 3, 0), (4, 3, 0), (4, 3, 0)),
    ),
    "block-boundaries": (
        "ceil(tokens / block_size) blocks: a new block exactly when the last one is full",
        W(4, 8, 16, 4, (8, 6, 0)),
    ),
    "fcfs-no-overtaking": (
        "the head of the waiting queue does not fit; a smaller request behind it must wait",
        W(4, 6, 64, 4, (12, 4, 0), (16, 2, 0), (2, 2, 0)),
    ),
    "preempt-most-recent": (
        "decodes need blocks and none is free: the last admitted requests are preempted, back "
        "to the front of the waiting queue, and recomputed later",
        W(4, 4, 64, 4, (4, 3, 0), (4, 3, 0), (4, 3, 0), (4, 3, 0), (4, 1, 1)),
    ),
    "self-preemption": (
        "the request that needs a block is itself the most recently admitted: it preempts itself",
        W(4, 2, 64, 4, (3, 5, 0), (4, 3, 0)),
    ),
    "preempt-frees-more": (
        "the victim holds more blocks than the decode needs; the rest stay free",
        W(4, 5, 64, 4, (4, 4, 0), (4, 4, 0), (8, 2, 0), (1, 1, 1)),
    ),
    "no-admission-after-preemption": (
        "a request preempts itself; its first chunk would fit again, but a step that "
        "preempted admits nobody",
        W(2, 3, 3, 4, (2, 5, 0), (2, 5, 0)),
    ),
    "chunked-recompute": (
        "a preempted request recomputes prompt and generated tokens, chunked under the budget",
        W(2, 6, 5, 4, (4, 6, 0), (5, 4, 0), (2, 2, 3)),
    ),
    "idle-steps": (
        "schedule() with nothing to do returns an empty plan; the request arrives at step 3",
        W(4, 4, 8, 2, (2, 2, 3)),
    ),
    "block-size-1": (
        "block_size 1: one block per token",
        W(1, 6, 3, 2, (4, 3, 0), (2, 2, 0)),
    ),
}


def play(module: ModuleType, name: str) -> Checker:
    what, w = SCENARIOS[name]
    try:
        return run(module, w)
    except Violation as v:
        pytest.fail(f"{v.message}\n  scenario {name} ({what}): {w.describe()}", pytrace=False)


def test_interface(sched: ModuleType) -> None:
    """Construct a scheduler, add a request and run one step."""
    play(sched, "single-request")


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario(sched: ModuleType, name: str) -> None:
    ck = play(sched, name)
    if name.startswith(("preempt", "self-", "no-admission", "chunked-recompute")):
        assert ck.preemptions, f"grader bug: scenario {name} never preempted"
