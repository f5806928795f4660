# alternative: counts a request's victims before evicting any; plain lists, math.ceil
"""Continuous-batching scheduler that plans each preemption before applying it."""

from __future__ import annotations

import math
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
        self.waiting: list[Request] = []
        self.running: list[Request] = []
        self.free_list: list[int] = list(range(config.num_blocks - 1, -1, -1))

    def add_request(self, request_id: str, prompt_len: int, max_new_tokens: int) -> None:
        self.waiting.append(Request(request_id, prompt_len, max_new_tokens))

    def num_free_blocks(self) -> int:
        return len(self.free_list)

    def _extra_blocks(self, req: Request, n: int) -> int:
        have = len(req.block_ids)
        return math.ceil((req.num_computed_tokens + n) / self.config.block_size) - have

    def _victims_for(self, index: int, extra: int) -> int:
        """How many requests from the end of running must go so that running[index] gets
        ``extra`` blocks; len(running) - index means it has to go itself."""
        free, count = len(self.free_list), 0
        while extra > free and count < len(self.running) - index:
            count += 1
            victim = self.running[-count]
            if count < len(self.running) - index:
                free += len(victim.block_ids)
        return count

    def _evict(self, count: int, preempted: list[str]) -> None:
        for _ in range(count):
            victim = self.running.pop()
            self.free_list.extend(victim.block_ids)
            victim.block_ids = []
            victim.num_computed_tokens = 0
            self.waiting.insert(0, victim)
            preempted.append(victim.request_id)

    def _give(self, req: Request, extra: int) -> None:
        for _ in range(extra):
            req.block_ids.append(self.free_list.pop())

    def schedule(self) -> StepPlan:
        budget = self.config.max_num_batched_tokens
        plan = StepPlan({})
        index = 0
        while index < len(self.running) and budget > 0:
            req = self.running[index]
            n = min(req.num_tokens - req.num_computed_tokens, budget)
            extra = self._extra_blocks(req, n)
            count = self._victims_for(index, extra)
            self._evict(count, plan.preempted)
            if index >= len(self.running):  # it preempted itself
                break
            self._give(req, extra)
            plan.num_scheduled_tokens[req.request_id] = n
            budget -= n
            index += 1
        if plan.preempted:
            return plan
        while self.waiting and budget > 0 and len(self.running) < self.config.max_num_seqs:
            head = self.waiting[0]
            n = min(head.num_tokens, budget)
            extra = self._extra_blocks(head, n)
            if extra > len(self.free_list):
                break
            self._give(head, extra)
            self.running.append(self.waiting.pop(0))
            plan.num_scheduled_tokens[head.request_id] = n
            budget -= n
        return plan

    def on_step_done(self, plan: StepPlan) -> list[str]:
        by_id = {r.request_id: r for r in self.running}
        finished = []
        for rid, n in plan.num_scheduled_tokens.items():
            req = by_id[rid]
            req.num_computed_tokens += n
            if req.num_computed_tokens == req.num_tokens:
                req.num_output_tokens += 1
        for req in list(self.running):
            if req.num_output_tokens == req.max_new_tokens:
                self.running.remove(req)
                self.free_list.extend(req.block_ids)
                req.block_ids = []
                finished.append(req.request_id)
        return finished
