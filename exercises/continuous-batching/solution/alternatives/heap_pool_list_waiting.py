# alternative: waiting a plain list, a min-heap of free ids, victims in a batch (blind solver)
"""continuous-batching: alternative style.

- `waiting` is a plain list (README: "a sequence of Request, front first"),
- the free pool is a min-heap (lowest id handed out first),
- the running walk iterates over a snapshot and detects its own preemption by identity,
- on_step_done finds requests by scanning `running` (no id -> request dict),
- preemption computes the whole victim set first, then applies it (same result as popping
  one at a time, because the check is re-done against the pool after each pop).
"""

from __future__ import annotations

import heapq
from collections import deque  # noqa: F401  (kept from the starter)
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SchedulerConfig:
    max_num_batched_tokens: int
    max_num_seqs: int
    num_blocks: int
    block_size: int


@dataclass
class Request:
    request_id: str
    prompt_len: int
    max_new_tokens: int
    num_computed_tokens: int = 0
    num_output_tokens: int = 0
    block_ids: list[int] = field(default_factory=list)

    @property
    def num_tokens(self) -> int:
        return self.prompt_len + self.num_output_tokens


@dataclass
class StepPlan:
    num_scheduled_tokens: dict[str, int]
    preempted: list[str] = field(default_factory=list)


def _blocks_for(tokens: int, bs: int) -> int:
    q, r = divmod(tokens, bs)
    return q + (1 if r else 0)


class Scheduler:
    def __init__(self, config: SchedulerConfig) -> None:
        self.config = config
        self.waiting: list[Request] = []
        self.running: list[Request] = []
        self._heap: list[int] = list(range(config.num_blocks))
        heapq.heapify(self._heap)

    def add_request(self, request_id: str, prompt_len: int, max_new_tokens: int) -> None:
        self.waiting.append(
            Request(request_id=request_id, prompt_len=prompt_len, max_new_tokens=max_new_tokens)
        )

    def num_free_blocks(self) -> int:
        return len(self._heap)

    def _give_back(self, req: Request) -> None:
        for b in req.block_ids:
            heapq.heappush(self._heap, b)
        req.block_ids = []

    def _grow(self, req: Request, total_tokens: int) -> None:
        want = _blocks_for(total_tokens, self.config.block_size)
        while len(req.block_ids) < want:
            req.block_ids.append(heapq.heappop(self._heap))

    def schedule(self) -> StepPlan:
        bs = self.config.block_size
        budget = self.config.max_num_batched_tokens
        counts: dict[str, int] = {}
        victims: list[Request] = []

        for req in list(self.running):
            if budget <= 0:
                break
            if req not in self.running:  # popped as a victim by an earlier request
                break
            n = min(req.num_tokens - req.num_computed_tokens, budget)
            deficit = _blocks_for(req.num_computed_tokens + n, bs) - len(req.block_ids)
            # plan the victims: from the tail, until the pool covers the deficit
            freed = 0
            k = 0
            self_hit = False
            while deficit > len(self._heap) + freed:
                k += 1
                cand = self.running[-k]
                freed += len(cand.block_ids)
                if cand is req:
                    self_hit = True
                    break
            batch = self.running[len(self.running) - k :] if k else []
            del self.running[len(self.running) - k :]
            for v in reversed(batch):  # popped last first
                self._give_back(v)
                v.num_computed_tokens = 0
                self.waiting.insert(0, v)
                victims.append(v)
            if self_hit:
                break
            self._grow(req, req.num_computed_tokens + n)
            counts[req.request_id] = n
            budget -= n

        if not victims:
            while self.waiting and budget > 0 and len(self.running) < self.config.max_num_seqs:
                head = self.waiting[0]
                n = min(head.num_tokens, budget)
                if _blocks_for(n, bs) > len(self._heap):
                    break
                self.waiting.pop(0)
                self.running.append(head)
                self._grow(head, n)
                counts[head.request_id] = n
                budget -= n

        return StepPlan(num_scheduled_tokens=counts, preempted=[v.request_id for v in victims])

    def on_step_done(self, plan: StepPlan) -> list[str]:
        done: list[str] = []
        for rid, n in plan.num_scheduled_tokens.items():
            req = next(r for r in self.running if r.request_id == rid)
            req.num_computed_tokens += n
            if req.num_computed_tokens < req.num_tokens:
                continue
            req.num_output_tokens += 1
            if req.num_output_tokens == req.max_new_tokens:
                done.append(rid)
        if done:
            gone = set(done)
            for r in self.running:
                if r.request_id in gone:
                    self._give_back(r)
            self.running = [r for r in self.running if r.request_id not in gone]
        return done
