# alternative: a BlockPool class (free ids in a set), a for-loop over a snapshot of running
"""Continuous-batching scheduler with the KV pool factored out into its own class."""

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


class BlockPool:
    """Free block ids; hands out the lowest ids first."""

    def __init__(self, num_blocks: int) -> None:
        self.free_ids = set(range(num_blocks))

    def __len__(self) -> int:
        return len(self.free_ids)

    def take(self, count: int) -> list[int]:
        ids = sorted(self.free_ids)[:count]
        self.free_ids.difference_update(ids)
        return ids

    def give_back(self, ids: list[int]) -> None:
        self.free_ids.update(ids)


class Scheduler:
    def __init__(self, config: SchedulerConfig) -> None:
        self.config = config
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.pool = BlockPool(config.num_blocks)
        self.by_id: dict[str, Request] = {}

    def add_request(self, request_id: str, prompt_len: int, max_new_tokens: int) -> None:
        self.by_id[request_id] = Request(request_id, prompt_len, max_new_tokens)
        self.waiting.append(self.by_id[request_id])

    def num_free_blocks(self) -> int:
        return len(self.pool)

    def _missing_blocks(self, req: Request, n: int) -> int:
        bs = self.config.block_size
        return (req.num_computed_tokens + n + bs - 1) // bs - len(req.block_ids)

    def schedule(self) -> StepPlan:
        left = self.config.max_num_batched_tokens
        tokens: dict[str, int] = {}
        preempted: list[str] = []
        for req in list(self.running):
            if left == 0 or req.request_id in preempted:
                break  # a preempted request was popped from the end: nothing follows it
            n = min(req.num_tokens - req.num_computed_tokens, left)
            while self._missing_blocks(req, n) > len(self.pool):
                victim = self.running.pop()
                self.pool.give_back(victim.block_ids)
                victim.block_ids = []
                victim.num_computed_tokens = 0
                self.waiting.appendleft(victim)
                preempted.append(victim.request_id)
                if victim is req:
                    break
            if req.request_id in preempted:
                break
            req.block_ids += self.pool.take(self._missing_blocks(req, n))
            tokens[req.request_id] = n
            left -= n
        while not preempted and left and self.waiting:
            if len(self.running) == self.config.max_num_seqs:
                break
            head = self.waiting[0]
            n = min(head.num_tokens, left)
            if self._missing_blocks(head, n) > len(self.pool):
                break
            head.block_ids += self.pool.take(self._missing_blocks(head, n))
            self.running.append(self.waiting.popleft())
            tokens[head.request_id] = n
            left -= n
        return StepPlan(tokens, preempted)

    def on_step_done(self, plan: StepPlan) -> list[str]:
        done = []
        for rid, n in plan.num_scheduled_tokens.items():
            req = self.by_id[rid]
            req.num_computed_tokens += n
            if req.num_computed_tokens != req.num_tokens:
                continue
            req.num_output_tokens += 1
            if req.num_output_tokens >= req.max_new_tokens:
                self.running = [r for r in self.running if r is not req]
                self.pool.give_back(req.block_ids)
                req.block_ids = []
                done.append(self.by_id.pop(rid).request_id)
        return done
