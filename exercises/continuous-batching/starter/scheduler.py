"""continuous-batching: an iteration-level scheduler with chunked prefill, a paged KV block
pool and preemption by recomputation (vLLM V1's FCFS policy, simplified).

Grade with:  quizzer exercise continuous-batching --check
README.md (next to this file) states the policy the grader holds you to, step by step.
The dataclasses below are the interface: keep their names and fields.
"""

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
    block_ids: list[int] = field(default_factory=list)  # its block table

    @property
    def num_tokens(self) -> int:
        """Prompt plus generated tokens."""
        return self.prompt_len + self.num_output_tokens


@dataclass
class StepPlan:
    num_scheduled_tokens: dict[str, int]  # request id -> tokens to compute, in schedule order
    preempted: list[str] = field(default_factory=list)  # ids preempted by this schedule()


class Scheduler:
    def __init__(self, config: SchedulerConfig) -> None:
        self.config = config
        self.waiting: deque[Request] = deque()  # front first
        self.running: list[Request] = []  # admission order
        # TODO: the pool of free block ids (all num_blocks of them at the start) and a way
        # to find a request by id in on_step_done.

    def add_request(self, request_id: str, prompt_len: int, max_new_tokens: int) -> None:
        """A new request joins the back of the waiting queue."""
        raise NotImplementedError("not implemented: Scheduler.add_request")

    def num_free_blocks(self) -> int:
        """How many blocks of the pool are in no block table."""
        raise NotImplementedError("not implemented: Scheduler.num_free_blocks")

    def schedule(self) -> StepPlan:
        """Plan one step: running requests in running order (preempting the most recently
        admitted when blocks run out), then, if nothing was preempted, admit from the front
        of the waiting queue. Allocates the blocks of every scheduled token."""
        raise NotImplementedError("not implemented: Scheduler.schedule")

    def on_step_done(self, plan: StepPlan) -> list[str]:
        """The step ran: advance num_computed_tokens, sample a token for every request whose
        tokens are all computed, finish (and free) the ones that reached max_new_tokens.
        Returns the ids of the finished requests."""
        raise NotImplementedError("not implemented: Scheduler.on_step_done")
