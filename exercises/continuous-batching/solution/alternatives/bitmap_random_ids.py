# alternative: a bitmap pool handing out random free ids, recursive preemption (blind solver)
"""continuous-batching: alternative style.

- no free list: the pool is a bytearray ownership bitmap plus a free counter, and block ids
  are picked at random among the free ones (README: "Which free block id you hand out is up
  to you"),
- the running phase is written as a recursive helper `_make_room` that preempts one victim
  per call,
- the plan is assembled from a list of (id, n) pairs and turned into a dict at the end,
- on_step_done walks `running` backwards so that deleting finished entries is safe.
"""

from __future__ import annotations

import random
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
        self._used = bytearray(config.num_blocks)
        self._nfree = config.num_blocks
        self._rng = random.Random(12345)

    def add_request(self, request_id: str, prompt_len: int, max_new_tokens: int) -> None:
        self.waiting.append(Request(request_id, prompt_len, max_new_tokens))

    def num_free_blocks(self) -> int:
        return self._nfree

    # --- pool -------------------------------------------------------------------------
    def _take(self, k: int) -> list[int]:
        free_ids = [i for i, u in enumerate(self._used) if not u]
        assert len(free_ids) >= k
        got = self._rng.sample(free_ids, k)
        for b in got:
            self._used[b] = 1
        self._nfree -= k
        return got

    def _drop(self, req: Request) -> None:
        for b in req.block_ids:
            self._used[b] = 0
        self._nfree += len(req.block_ids)
        req.block_ids.clear()

    def _missing(self, req: Request, n: int) -> int:
        total = req.num_computed_tokens + n
        return (total + self.config.block_size - 1) // self.config.block_size - len(req.block_ids)

    # --- scheduling -------------------------------------------------------------------
    def _make_room(self, req: Request, n: int, preempted: list[str]) -> bool:
        """Preempt from the tail until `req` fits. False when `req` itself was popped."""
        if self._missing(req, n) <= self._nfree:
            return True
        victim = self.running.pop()
        self._drop(victim)
        victim.num_computed_tokens = 0
        self.waiting.appendleft(victim)
        preempted.append(victim.request_id)
        if victim is req:
            return False
        return self._make_room(req, n, preempted)

    def schedule(self) -> StepPlan:
        cfg = self.config
        left = cfg.max_num_batched_tokens
        pairs: list[tuple[str, int]] = []
        preempted: list[str] = []

        idx = 0
        while idx < len(self.running) and left:
            req = self.running[idx]
            n = min(req.num_tokens - req.num_computed_tokens, left)
            if not self._make_room(req, n, preempted):
                break
            req.block_ids.extend(self._take(self._missing(req, n)))
            pairs.append((req.request_id, n))
            left -= n
            idx += 1

        if preempted:
            return StepPlan(dict(pairs), preempted)

        while self.waiting and left and len(self.running) < cfg.max_num_seqs:
            head = self.waiting[0]
            n = min(head.num_tokens, left)
            k = self._missing(head, n)
            if k > self._nfree:
                break
            self.running.append(self.waiting.popleft())
            head.block_ids.extend(self._take(k))
            pairs.append((head.request_id, n))
            left -= n
        return StepPlan(dict(pairs), preempted)

    def on_step_done(self, plan: StepPlan) -> list[str]:
        counts = plan.num_scheduled_tokens
        by_id = {r.request_id: r for r in self.running}
        for rid, n in counts.items():
            r = by_id[rid]
            r.num_computed_tokens += n
            if r.num_computed_tokens == r.num_tokens:
                r.num_output_tokens += 1
        finished: list[str] = []
        for i in range(len(self.running) - 1, -1, -1):
            r = self.running[i]
            if r.request_id in counts and r.num_output_tokens == r.max_new_tokens:
                self._drop(r)
                del self.running[i]
                finished.append(r.request_id)
        return finished
