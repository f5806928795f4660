"""Reference: an iteration-level (continuous-batching) scheduler with chunked prefill and
preemption by recomputation, in the style of vLLM V1's FCFS scheduler."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SchedulerConfig:
    max_num_batched_tokens: int  # token budget of one step, shared by all its requests
    max_num_seqs: int  # most requests in the running list at once
    num_blocks: int  # KV blocks in the pool, ids 0 .. num_blocks - 1
    block_size: int  # tokens per KV block


@dataclass
class Request:
    request_id: str
    prompt_len: int
    max_new_tokens: int
    num_computed_tokens: int = 0  # tokens whose KV is in the cache
    num_output_tokens: int = 0  # tokens generated so far
    block_ids: list[int] = field(default_factory=list)

    @property
    def num_tokens(self) -> int:
        """Prompt plus generated tokens: what the KV cache must eventually hold."""
        return self.prompt_len + self.num_output_tokens


@dataclass
class StepPlan:
    num_scheduled_tokens: dict[str, int]  # request id -> tokens to compute, in schedule order
    preempted: list[str] = field(default_factory=list)  # ids preempted by this schedule()


def blocks_for(num_tokens: int, block_size: int) -> int:
    """ceil(num_tokens / block_size) without floats."""
    return -(-num_tokens // block_size)


class Scheduler:
    def __init__(self, config: SchedulerConfig) -> None:
        self.config = config
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.requests: dict[str, Request] = {}
        self.free: deque[int] = deque(range(config.num_blocks))

    def add_request(self, request_id: str, prompt_len: int, max_new_tokens: int) -> None:
        request = Request(request_id, prompt_len, max_new_tokens)
        self.requests[request_id] = request
        self.waiting.append(request)

    def num_free_blocks(self) -> int:
        return len(self.free)

    # ---------------------------------------------------------------- blocks

    def _grow(self, request: Request, num_new_tokens: int) -> bool:
        """Give ``request`` the blocks for ``num_new_tokens`` more tokens, or nothing."""
        total = request.num_computed_tokens + num_new_tokens
        need = blocks_for(total, self.config.block_size) - len(request.block_ids)
        if need > len(self.free):
            return False
        request.block_ids.extend(self.free.popleft() for _ in range(need))
        return True

    def _release(self, request: Request) -> None:
        self.free.extend(request.block_ids)
        request.block_ids = []

    def _preempt_last(self) -> Request:
        victim = self.running.pop()  # the most recently admitted
        self._release(victim)
        victim.num_computed_tokens = 0  # recomputation: its KV is gone
        self.waiting.appendleft(victim)
        return victim

    # ---------------------------------------------------------------- one step

    def schedule(self) -> StepPlan:
        budget = self.config.max_num_batched_tokens
        plan = StepPlan({})
        index = 0
        while index < len(self.running) and budget > 0:
            request = self.running[index]
            n = min(request.num_tokens - request.num_computed_tokens, budget)
            while not self._grow(request, n):
                victim = self._preempt_last()
                plan.preempted.append(victim.request_id)
                if victim is request:
                    break
            if plan.preempted and plan.preempted[-1] == request.request_id:
                break
            plan.num_scheduled_tokens[request.request_id] = n
            budget -= n
            index += 1
        if plan.preempted:
            return plan
        while self.waiting and budget > 0 and len(self.running) < self.config.max_num_seqs:
            request = self.waiting[0]
            n = min(request.num_tokens, budget)
            if not self._grow(request, n):
                break  # FCFS: nobody overtakes the head of the queue
            self.waiting.popleft()
            self.running.append(request)
            plan.num_scheduled_tokens[request.request_id] = n
            budget -= n
        return plan

    def on_step_done(self, plan: StepPlan) -> list[str]:
        finished: list[str] = []
        for request_id, n in plan.num_scheduled_tokens.items():
            request = self.requests[request_id]
            request.num_computed_tokens += n
            if request.num_computed_tokens < request.num_tokens:
                continue  # a prefill chunk: no token is sampled yet
            request.num_output_tokens += 1
            if request.num_output_tokens == request.max_new_tokens:
                self.running.remove(request)
                self._release(request)
                del self.requests[request_id]
                finished.append(request_id)
        return finished
