# alternative: no pool object, free blocks from the block tables, one loop (blind solver)
"""continuous-batching: alternative style.

- no pool object at all: the free blocks are derived from the block tables every time
  (num_free_blocks = num_blocks - blocks held; a new id is the smallest one not held),
- one unified candidate loop for both phases (a generator yields running requests, then,
  if nothing was preempted, the head of waiting), with the per-phase differences as flags,
- victims are kept aside and put at the front of `waiting` in one extendleft at the end of
  the running phase (popped order r3, r2 -> waiting r2, r3, ...: the last popped first),
- the finish test in on_step_done uses a set of finished ids and one filter pass.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from itertools import count


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

    def add_request(self, request_id: str, prompt_len: int, max_new_tokens: int) -> None:
        self.waiting.append(Request(request_id, prompt_len, max_new_tokens))

    def _held(self) -> set[int]:
        held: set[int] = set()
        for r in self.running:
            held.update(r.block_ids)
        for r in self.waiting:
            held.update(r.block_ids)
        return held

    def num_free_blocks(self) -> int:
        return self.config.num_blocks - len(self._held())

    def _ensure(self, req: Request, tokens: int) -> None:
        want = -(-tokens // self.config.block_size)
        held = self._held()
        ids = (b for b in count() if b not in held)
        while len(req.block_ids) < want:
            req.block_ids.append(next(ids))

    def _fits(self, req: Request, tokens: int) -> bool:
        return -(-tokens // self.config.block_size) - len(req.block_ids) <= self.num_free_blocks()

    def _candidates(self, state):
        i = 0
        while i < len(self.running):
            yield self.running[i], True
            if state["stop"]:
                return
            i += 1
        if state["victims"]:
            return
        while self.waiting and len(self.running) < self.config.max_num_seqs:
            yield self.waiting[0], False
            if state["stop"]:
                return

    def schedule(self) -> StepPlan:
        state = {"stop": False, "victims": []}
        budget = self.config.max_num_batched_tokens
        plan: dict[str, int] = {}
        for req, is_running in self._candidates(state):
            if budget == 0:
                state["stop"] = True
                continue
            n = min(req.num_tokens - req.num_computed_tokens, budget)
            target = req.num_computed_tokens + n
            if is_running:
                while not self._fits(req, target):
                    victim = self.running.pop()
                    victim.block_ids = []
                    victim.num_computed_tokens = 0
                    state["victims"].append(victim)
                    if victim is req:
                        state["stop"] = True
                        break
                if state["stop"]:
                    continue
            else:
                if not self._fits(req, target):
                    state["stop"] = True
                    continue
                self.running.append(self.waiting.popleft())
            self._ensure(req, target)
            plan[req.request_id] = n
            budget -= n
        # the running phase put victims aside; the waiting phase never ran if there were any
        self.waiting.extendleft(state["victims"])
        return StepPlan(plan, [v.request_id for v in state["victims"]])

    def on_step_done(self, plan: StepPlan) -> list[str]:
        index = {r.request_id: r for r in self.running}
        finished = set()
        for rid, n in plan.num_scheduled_tokens.items():
            r = index[rid]
            r.num_computed_tokens += n
            if r.num_computed_tokens == r.num_tokens:
                r.num_output_tokens += 1
                if r.num_output_tokens == r.max_new_tokens:
                    finished.add(rid)
        for rid in finished:
            index[rid].block_ids = []
        self.running = [r for r in self.running if r.request_id not in finished]
        return sorted(finished)
