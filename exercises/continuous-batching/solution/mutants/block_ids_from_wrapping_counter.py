# mutant: block ids from a wrapping counter, so one id can be handed out twice (blind solver)
"""continuous-batching: straightforward solution (index walk, free list as a list)."""

from __future__ import annotations

from collections import deque
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


class Scheduler:
    def __init__(self, config: SchedulerConfig) -> None:
        self.config = config
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.free: list[int] = list(range(config.num_blocks))
        self.requests: dict[str, Request] = {}

    def add_request(self, request_id: str, prompt_len: int, max_new_tokens: int) -> None:
        r = Request(request_id, prompt_len, max_new_tokens)
        self.requests[request_id] = r
        self.waiting.append(r)

    def num_free_blocks(self) -> int:
        return len(self.free)

    def _new_blocks(self, req: Request, n: int) -> int:
        t = req.num_computed_tokens + n
        return -(-t // self.config.block_size) - len(req.block_ids)

    def _alloc(self, req: Request, k: int) -> None:
        for _ in range(k):
            self.free.pop()
            self.next_id = (getattr(self, "next_id", -1) + 1) % self.config.num_blocks
            req.block_ids.append(self.next_id)

    def _release(self, req: Request) -> None:
        self.free.extend(req.block_ids)
        req.block_ids = []

    def schedule(self) -> StepPlan:
        plan = StepPlan({})
        budget = self.config.max_num_batched_tokens
        i = 0
        while i < len(self.running) and budget > 0:
            req = self.running[i]
            n = min(req.num_tokens - req.num_computed_tokens, budget)
            scheduled = True
            while True:
                need = self._new_blocks(req, n)
                if need <= len(self.free):
                    break
                victim = self.running.pop()
                self._release(victim)
                victim.num_computed_tokens = 0
                self.waiting.appendleft(victim)
                plan.preempted.append(victim.request_id)
                if victim is req:
                    scheduled = False
                    break
            if not scheduled:
                break
            self._alloc(req, need)
            plan.num_scheduled_tokens[req.request_id] = n
            budget -= n
            i += 1
        if not plan.preempted:
            while self.waiting and budget > 0 and len(self.running) < self.config.max_num_seqs:
                req = self.waiting[0]
                n = min(req.num_tokens, budget)
                need = self._new_blocks(req, n)
                if need > len(self.free):
                    break
                self.waiting.popleft()
                self.running.append(req)
                self._alloc(req, need)
                plan.num_scheduled_tokens[req.request_id] = n
                budget -= n
        return plan

    def on_step_done(self, plan: StepPlan) -> list[str]:
        finished = []
        for rid, n in plan.num_scheduled_tokens.items():
            req = self.requests[rid]
            req.num_computed_tokens += n
            if req.num_computed_tokens == req.num_tokens:
                req.num_output_tokens += 1
                if req.num_output_tokens >= req.max_new_tokens:
                    self.running.remove(req)
                    self._release(req)
                    del self.requests[rid]
                    finished.append(rid)
        return finished
