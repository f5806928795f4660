"""The grader's own model of the README's scheduling policy, kept in lockstep with the user's
scheduler: after every call the user's state must equal the model's, so the first step where
they differ is the one reported."""

from __future__ import annotations

from dataclasses import dataclass, field


def ceil_div(a: int, b: int) -> int:
    """ceil(a / b) for non-negative ints."""
    return -(-a // b)


@dataclass
class Req:
    """What the model knows of one request."""

    rid: str
    prompt_len: int
    max_new_tokens: int
    computed: int = 0
    outputs: int = 0
    blocks: int = 0  # how many blocks it holds (ids are the user's business)

    @property
    def num_tokens(self) -> int:
        return self.prompt_len + self.outputs

    @property
    def decoding(self) -> bool:
        """Prefill (or recomputation) done: it needs exactly its last sampled token."""
        return self.outputs >= 1 and self.computed == self.num_tokens - 1


@dataclass
class Step:
    """What the model decided in one schedule()."""

    plan: dict[str, int] = field(default_factory=dict)  # in schedule order
    preempted: list[str] = field(default_factory=list)
    admitted: list[str] = field(default_factory=list)
    # why the head of the waiting queue was not admitted (None: the queue emptied)
    head_blocked: str | None = None
    budget_left: int = 0


@dataclass
class Model:
    budget: int
    max_seqs: int
    num_blocks: int
    block_size: int
    reqs: dict[str, Req] = field(default_factory=dict)
    waiting: list[str] = field(default_factory=list)  # front first
    running: list[str] = field(default_factory=list)  # admission order

    @property
    def free(self) -> int:
        return self.num_blocks - sum(r.blocks for r in self.reqs.values())

    def add(self, rid: str, prompt_len: int, max_new_tokens: int) -> None:
        self.reqs[rid] = Req(rid, prompt_len, max_new_tokens)
        self.waiting.append(rid)

    def blocks_needed(self, req: Req, n: int) -> int:
        """New blocks ``req`` needs to also hold ``n`` more tokens."""
        return ceil_div(req.computed + n, self.block_size) - req.blocks

    def schedule(self) -> Step:
        step = Step()
        budget = self.budget
        i = 0
        while i < len(self.running) and budget > 0:
            req = self.reqs[self.running[i]]
            n = min(req.num_tokens - req.computed, budget)
            stopped = False
            while self.blocks_needed(req, n) > self.free:
                victim = self.reqs[self.running.pop()]
                victim.blocks = 0
                victim.computed = 0
                self.waiting.insert(0, victim.rid)
                step.preempted.append(victim.rid)
                if victim is req:
                    stopped = True
                    break
            if stopped:
                break
            req.blocks += self.blocks_needed(req, n)
            step.plan[req.rid] = n
            budget -= n
            i += 1
        if step.preempted:
            step.head_blocked = "preempted"
        else:
            while True:
                if not self.waiting:
                    step.head_blocked = None
                    break
                if budget == 0:
                    step.head_blocked = "budget"
                    break
                if len(self.running) >= self.max_seqs:
                    step.head_blocked = "max_num_seqs"
                    break
                req = self.reqs[self.waiting[0]]
                n = min(req.num_tokens, budget)
                if self.blocks_needed(req, n) > self.free:
                    step.head_blocked = "blocks"
                    break
                self.waiting.pop(0)
                self.running.append(req.rid)
                req.blocks += self.blocks_needed(req, n)
                step.plan[req.rid] = n
                step.admitted.append(req.rid)
                budget -= n
        step.budget_left = budget
        return step

    def done(self, plan: dict[str, int]) -> tuple[set[str], list[str]]:
        """Apply one executed step: (ids that sampled a token, ids that finished)."""
        sampled: set[str] = set()
        finished: list[str] = []
        for rid, n in plan.items():
            req = self.reqs[rid]
            req.computed += n
            if req.computed == req.num_tokens:
                req.outputs += 1
                sampled.add(rid)
                if req.outputs == req.max_new_tokens:
                    self.running.remove(rid)
                    del self.reqs[rid]
                    finished.append(rid)
        return sampled, finished
