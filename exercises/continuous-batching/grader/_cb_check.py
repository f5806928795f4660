"""Drive the user's Scheduler through one workload, step by step, next to the model.

After every schedule() and every on_step_done() the checks below run in a fixed order: the
policy-free invariants first (plan shape, token budget, max_num_seqs, queues, KV blocks,
decode first), then the policy (preemption, queue order, admission, chunk sizes) against
_cb_model. The first broken one raises Violation with a sentence naming the property.
"""

from __future__ import annotations

import copy
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from _cb_model import Model, Req, Step, ceil_div

ATTRS = ("request_id", "num_computed_tokens", "num_output_tokens", "block_ids")


def plural(n: int, noun: str = "block") -> str:
    """'1 block', '3 blocks'."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class Violation(Exception):
    """A broken property; ``key`` groups failures of the same kind (for shrinking)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


@dataclass(frozen=True)
class Workload:
    """A scheduler config and the requests that arrive, each (id, prompt_len,
    max_new_tokens, arrival step); requests of one step are added in this order."""

    block_size: int
    num_blocks: int
    budget: int
    max_seqs: int
    requests: tuple[tuple[str, int, int, int], ...]

    def valid(self) -> bool:
        """Every request fits the pool alone (the README's promise)."""
        return all(
            p >= 1 and m >= 1 and ceil_div(p + m - 1, self.block_size) <= self.num_blocks
            for _, p, m, _ in self.requests
        )

    def describe(self) -> str:
        reqs = ", ".join(
            f"{r}(prompt {p}, max_new {m}) at step {t}" for r, p, m, t in self.requests
        )
        return (
            f"SchedulerConfig(max_num_batched_tokens={self.budget}, "
            f"max_num_seqs={self.max_seqs}, num_blocks={self.num_blocks}, "
            f"block_size={self.block_size}); requests: {reqs}"
        )


def _user_line(exc: BaseException, module: ModuleType) -> str:
    path = getattr(module, "__file__", None)
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if path and Path(frame.filename) == Path(path):
            line = frame.lineno
    return f" (scheduler.py line {line})" if line else ""


class Checker:
    """One user Scheduler and one Model, advanced together."""

    def __init__(self, module: ModuleType, w: Workload) -> None:
        self.module = module
        self.w = w
        self.step_no = 0
        self.model = Model(w.budget, w.max_seqs, w.num_blocks, w.block_size)
        self.preemptions = 0
        cfg_cls = getattr(module, "SchedulerConfig", None)
        sched_cls = getattr(module, "Scheduler", None)
        if not callable(cfg_cls) or not callable(sched_cls):
            raise Violation(
                "interface",
                "scheduler.py must define SchedulerConfig(max_num_batched_tokens, "
                "max_num_seqs, num_blocks, block_size) and Scheduler(config)",
            )
        config = self.call(
            "SchedulerConfig(...)",
            cfg_cls,
            max_num_batched_tokens=w.budget,
            max_num_seqs=w.max_seqs,
            num_blocks=w.num_blocks,
            block_size=w.block_size,
        )
        self.s = self.call("Scheduler(config)", sched_cls, config)

    # ------------------------------------------------------------ plumbing

    def call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call user code; an exception becomes a Violation that says where."""
        try:
            return fn(*args, **kwargs)
        except NotImplementedError as exc:
            raise Violation(
                "not-implemented",
                f"{what} is not implemented yet (NotImplementedError: {exc})",
            ) from None
        except Exception as exc:
            where = _user_line(exc, self.module)
            raise Violation(
                "crash",
                f"step {self.step_no}: {what} raised {type(exc).__name__}: {exc}{where}",
            ) from None

    def fail(self, key: str, text: str) -> None:
        raise Violation(key, f"step {self.step_no}: {text}")

    def objs(self, name: str) -> list[Any]:
        try:
            items = list(getattr(self.s, name))
            for item in items:
                for attr in ATTRS:
                    getattr(item, attr)
        except Exception:
            raise Violation(
                "interface",
                f"Scheduler.{name} must be a sequence of Request objects with "
                f"{', '.join(ATTRS)} (README, Interface)",
            ) from None
        return items

    def ids(self, name: str) -> list[str]:
        return [r.request_id for r in self.objs(name)]

    def free_blocks(self) -> int:
        value = self.call("num_free_blocks()", self.s.num_free_blocks)
        if not isinstance(value, int):
            self.fail("interface", f"num_free_blocks() must return an int, got {value!r}")
        return value

    # ------------------------------------------------------------ driving

    def add(self, rid: str, prompt_len: int, max_new_tokens: int) -> None:
        self.call(
            f"add_request({rid!r}, {prompt_len}, {max_new_tokens})",
            self.s.add_request,
            rid,
            prompt_len,
            max_new_tokens,
        )
        self.model.add(rid, prompt_len, max_new_tokens)
        waiting = self.ids("waiting")
        if waiting != self.model.waiting:
            self.fail(
                "add",
                f"after add_request({rid!r}, ...) waiting is {waiting}, expected "
                f"{self.model.waiting}: a new request joins the back of waiting at once, not at "
                "the next schedule()",
            )

    def step(self) -> None:
        before = copy.deepcopy(self.model)
        plan_obj = self.call("schedule()", self.s.schedule)
        plan, preempted = self.read_plan(plan_obj, before)
        exp = self.model.schedule()
        self.check_schedule(before, exp, plan, preempted)
        self.preemptions += len(preempted)
        users = {r.request_id: r for r in self.objs("running")}
        finished = self.call("on_step_done(plan)", self.s.on_step_done, plan_obj)
        self.check_done(before, exp, users, finished)
        self.step_no += 1

    def finish(self) -> None:
        left = self.ids("running") + self.ids("waiting")
        if left:
            self.fail("finish", f"every request has finished but {left} are still queued")
        free = self.free_blocks()
        if free != self.w.num_blocks:
            self.fail(
                "leak",
                f"all requests finished but num_free_blocks() = {free} of {self.w.num_blocks}: "
                "a finished request must give back all its blocks",
            )

    # ------------------------------------------------------------ after schedule()

    def read_plan(self, plan_obj: Any, before: Model) -> tuple[dict[str, int], list[str]]:
        tokens = getattr(plan_obj, "num_scheduled_tokens", None)
        preempted = getattr(plan_obj, "preempted", None)
        shape = (
            "schedule() must return a StepPlan with num_scheduled_tokens (dict: request id -> "
            "tokens >= 1) and preempted (list of request ids)"
        )
        if not isinstance(tokens, dict) or not isinstance(preempted, (list, tuple)):
            self.fail("plan", f"{shape}, got {plan_obj!r}")
        for rid, n in tokens.items():
            if rid not in before.reqs:
                self.fail("plan", f"{shape}: {rid!r} is not an unfinished request")
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                self.fail("plan", f"{shape}: {rid!r} -> {n!r}; leave out a request with 0 tokens")
        for rid in preempted:
            if rid in before.waiting:
                self.fail(
                    "admit-after-preempt",
                    f"preempted {rid}, which was waiting when the step began: serve (and "
                    "preempt among) the running requests first; waiting ones are admitted "
                    "after them, and only in a step that preempted nothing",
                )
        if len(set(preempted)) != len(preempted) or not set(preempted) <= set(before.running):
            self.fail(
                "plan",
                f"{shape}: preempted = {list(preempted)} must list distinct running requests",
            )
        return dict(tokens), list(preempted)

    def check_schedule(
        self, before: Model, exp: Step, plan: dict[str, int], preempted: list[str]
    ) -> None:
        self.check_budget(plan)
        computed = self.check_queues(before, plan, preempted)
        self.check_tokens(before, plan, computed)
        self.check_blocks(plan, computed)
        self.check_decode_first(before, plan, preempted)
        self.check_preemption(before, exp, preempted)
        self.check_waiting_order(exp, preempted)
        self.check_admission(before, exp, plan, preempted)
        self.check_chunks(before, exp, plan)

    def check_budget(self, plan: dict[str, int]) -> None:
        total = sum(plan.values())
        if total <= self.w.budget:
            return
        left, over = self.w.budget, ""
        for rid, n in plan.items():
            if n > left and not over:
                over = f"; {rid} was given {n} tokens with {left} left"
            left = max(0, left - n)
        self.fail(
            "budget",
            f"step schedules {total} tokens {plan} but max_num_batched_tokens is "
            f"{self.w.budget}: the budget is shared by all requests of a step, and each one "
            f"gets at most what is left of it{over}",
        )

    def check_queues(
        self, before: Model, plan: dict[str, int], preempted: list[str]
    ) -> dict[str, int]:
        """Running and waiting hold every unfinished request once; returns each request's
        num_computed_tokens as schedule() must leave it (0 for the ones it preempted)."""
        running, waiting = self.objs("running"), self.objs("waiting")
        run_ids = [r.request_id for r in running]
        wait_ids = [r.request_id for r in waiting]
        every = run_ids + wait_ids
        if Counter(every) != Counter(list(before.reqs)):
            self.fail(
                "queues",
                f"running {run_ids} + waiting {wait_ids} must hold every unfinished request "
                f"exactly once ({sorted(before.reqs)})",
            )
        if len(run_ids) > self.w.max_seqs:
            self.fail(
                "max_num_seqs",
                f"{len(run_ids)} requests are running {run_ids} but max_num_seqs is "
                f"{self.w.max_seqs}: stop admitting when the running list is full",
            )
        for rid in plan:
            if rid in preempted and rid in run_ids:
                self.fail(
                    "admit-after-preempt",
                    f"{rid} was preempted and admitted again in the same step: a step that "
                    "preempts admits no waiting request",
                )
            if rid in preempted:
                self.fail(
                    "victim",
                    f"{rid} is both scheduled and preempted: the victim is the most recently "
                    "admitted running request, popped from the end of the running list, "
                    "never one already scheduled in this step",
                )
            if rid not in run_ids:
                self.fail("queues", f"{rid} is scheduled but not in the running list")
        for rid in preempted:
            if rid not in wait_ids:
                self.fail("queues", f"the preempted {rid} must be back in the waiting queue")
        computed = {}
        for r in running + waiting:
            rid = r.request_id
            want = 0 if rid in preempted else before.reqs[rid].computed
            if r.num_computed_tokens != want:
                if rid not in preempted and rid in before.running and rid in wait_ids:
                    self.fail(
                        "victim",
                        f"{rid} was running and is back in waiting with num_computed_tokens = "
                        f"{r.num_computed_tokens}, but plan.preempted {preempted} does not list "
                        "it: every request this call preempts is listed, the one being served "
                        "included when it is the last of the running list (and then no waiting "
                        "request is admitted)",
                    )
                if rid in preempted:
                    self.fail(
                        "recompute",
                        f"the preempted {rid} still has num_computed_tokens = "
                        f"{r.num_computed_tokens}: preemption by recomputation frees its "
                        "blocks and sets num_computed_tokens = 0, so that it will recompute "
                        "all its tokens (prompt and generated) when it is admitted again",
                    )
                self.fail(
                    "state",
                    f"schedule() changed num_computed_tokens of {rid} from {want} to "
                    f"{r.num_computed_tokens}; it moves only in on_step_done()",
                )
            if r.num_output_tokens != before.reqs[rid].outputs:
                self.fail("state", f"schedule() changed num_output_tokens of {rid}")
            computed[rid] = want
        return computed

    def check_tokens(self, before: Model, plan: dict[str, int], computed: dict[str, int]) -> None:
        for rid, n in plan.items():
            req = before.reqs[rid]
            missing = req.num_tokens - computed[rid]
            if n > missing:
                self.fail(
                    "tokens",
                    f"{rid} was given {n} tokens but only {missing} of its tokens are not yet "
                    f"computed (prompt {req.prompt_len} + {req.outputs} generated - "
                    f"{computed[rid]} computed): a step computes at most "
                    "num_tokens - num_computed_tokens tokens of a request",
                )

    def check_blocks(self, plan: dict[str, int], computed: dict[str, int]) -> None:
        bs, owner = self.w.block_size, {}
        for r in self.objs("waiting"):
            if list(r.block_ids):
                self.fail(
                    "blocks-waiting",
                    f"the waiting {r.request_id} holds blocks {list(r.block_ids)}: a waiting "
                    "request holds none (a preempted one gives all of its blocks back)",
                )
        held = 0
        for r in self.objs("running"):
            rid, table = r.request_id, list(r.block_ids)
            tokens = computed[rid] + plan.get(rid, 0)
            need = ceil_div(tokens, bs)
            where = f"{rid} holds {plural(len(table))} for its {tokens} computed and scheduled"
            if len(table) < need:
                self.fail(
                    "blocks-short",
                    f"{where} tokens but needs ceil({tokens}/{bs}) = {need}: a request is "
                    "scheduled only with all its blocks (admit it only when its blocks are "
                    "free, preempt when a running request's are not)",
                )
            if len(table) > need:
                self.fail(
                    "blocks-over",
                    f"{where} tokens, which need exactly ceil({tokens}/{bs}) = {need}: allocate "
                    "blocks for the tokens computed so far plus this step's, no more",
                )
            for b in table:
                if not isinstance(b, int) or not 0 <= b < self.w.num_blocks:
                    self.fail("blocks-ids", f"{rid} holds {b!r}, not a block id 0..num_blocks-1")
                if owner.get(b) == rid:
                    self.fail(
                        "blocks-ids",
                        f"block {b} appears twice in the table of {rid}: take each block from the "
                        "pool once",
                    )
                if b in owner:
                    self.fail(
                        "blocks-ids",
                        f"block {b} is in the tables of {owner[b]} and {rid}: a block belongs "
                        "to one request",
                    )
                owner[b] = rid
            held += len(table)
        free = self.free_blocks()
        if free != self.w.num_blocks - held:
            self.fail(
                "blocks-free",
                f"num_free_blocks() = {free} but {held} of the {self.w.num_blocks} blocks are "
                "in block tables: every block is either free or in exactly one table",
            )

    def check_decode_first(self, before: Model, plan: dict[str, int], preempted: list[str]) -> None:
        decoding = [rid for rid in before.running if before.reqs[rid].decoding]
        prefill = [rid for rid in plan if rid not in decoding]
        if not prefill:
            return
        for rid in decoding:
            if rid not in plan and rid not in preempted:
                self.fail(
                    "decode-first",
                    f"decode first: the step schedules prefill tokens of {prefill[0]} "
                    f"({plan[prefill[0]]}) but leaves out the decoding {rid}: serve the "
                    "running requests, in running order, before admitting waiting ones",
                )

    def check_preemption(self, before: Model, exp: Step, preempted: list[str]) -> None:
        if preempted == exp.preempted:
            return
        if not exp.preempted:
            self.fail(
                "preempt-when",
                f"preempted {preempted} although no block ran out: the running requests' "
                f"blocks fit in the {before.free} free blocks; preempt only when a running "
                "request needs more blocks than are free",
            )
        if not preempted:
            self.fail(
                "preempt-when",
                f"must preempt {exp.preempted}: a running request needs more blocks than are free",
            )
        if sorted(preempted) == sorted(exp.preempted):
            self.fail(
                "victim",
                f"preempted {preempted}: the right victims, listed in the wrong order; list them "
                f"in the order they were preempted (last of the running list first): expected "
                f"{exp.preempted}",
            )
        if preempted[0] != exp.preempted[0]:
            self.fail(
                "victim",
                f"preempted {preempted} but the victim must be the most recently admitted "
                f"running request, the last of the running list {before.running}: expected "
                f"{exp.preempted}",
            )
        self.fail(
            "victim",
            f"preempted {preempted}, expected {exp.preempted}: preempt one request at a time "
            "(the last of the running list) and retry the allocation after each",
        )

    def check_waiting_order(self, exp: Step, preempted: list[str]) -> None:
        got = self.ids("waiting")
        want = self.model.waiting
        if got == want or Counter(got) != Counter(want):
            return  # a different set is an admission problem, reported next
        if preempted:
            self.fail(
                "preempt-front",
                f"the waiting queue is {got} but preempted requests go back to the front of "
                f"the waiting queue, in admission order: expected {want}",
            )
        self.fail("queues", f"the waiting queue must keep its order: expected {want}, got {got}")

    def check_admission(
        self, before: Model, exp: Step, plan: dict[str, int], preempted: list[str]
    ) -> None:
        admitted = [rid for rid in self.ids("running") if rid not in before.running]
        want = exp.admitted
        if admitted == want:
            return
        if admitted and preempted:
            self.fail(
                "admit-after-preempt",
                f"preempted {preempted} and then admitted {admitted}: a step that preempts "
                "admits no waiting request",
            )
        if admitted[: len(want)] == want:  # admitted more than the model
            extra = admitted[len(want)]
            head = self.model.waiting[0] if self.model.waiting else None
            if extra != head:
                self.fail(
                    "fcfs",
                    f"FCFS: admitted {extra} while {head}, ahead of it in the waiting queue, "
                    "waits: admit strictly from the front and stop at the first request "
                    "that does not fit",
                )
            req = before.reqs[extra]
            if exp.head_blocked == "budget":
                self.fail(
                    "admit-budget",
                    f"admitted {extra}, but the running requests use the whole budget of the "
                    "step: waiting requests get only what is left after the running ones",
                )
            if exp.head_blocked == "max_num_seqs":
                self.fail(
                    "max_num_seqs",
                    f"admitted {extra}, but max_num_seqs={self.w.max_seqs} requests already run",
                )
            n = min(req.num_tokens, exp.budget_left)
            self.fail(
                "admit-blocks",
                f"admitted {extra}, but once the running requests have their blocks only "
                f"{plural(self.model.free)} are free and its first chunk of {n} tokens "
                f"needs {plural(ceil_div(n, self.w.block_size))}: admit a request only when "
                "its blocks are free",
            )
        if want[: len(admitted)] == admitted:  # admitted fewer
            miss = want[len(admitted)]
            n = exp.plan[miss]
            self.fail(
                "starvation",
                f"{miss} is at the head of the waiting queue and should be admitted: its first "
                f"chunk of {n} tokens (min of what it needs and the budget left) needs "
                f"{plural(ceil_div(n, self.w.block_size))}, they are free, and fewer than "
                f"max_num_seqs={self.w.max_seqs} requests run; the head is admitted at the "
                "first step that has budget, a seat and its blocks",
            )
        self.fail(
            "fcfs",
            f"FCFS: admitted {admitted}, expected {want}: admit from the front of the waiting "
            "queue, in order",
        )

    def check_chunks(self, before: Model, exp: Step, plan: dict[str, int]) -> None:
        left = self.w.budget
        for rid, n in exp.plan.items():
            got = plan.get(rid)
            req = before.reqs[rid]
            computed = 0 if rid in exp.admitted else req.computed
            missing = req.num_tokens - computed
            if got != n:
                redo = ""
                if req.outputs and rid in exp.admitted:
                    redo = (
                        f" (it was preempted: recomputation computes all its "
                        f"{req.num_tokens} tokens, prompt and generated, again)"
                    )
                self.fail(
                    "chunk",
                    f"{rid} should get min(its {missing} uncomputed tokens, the {left} tokens "
                    f"of budget left) = {n}, got {got or 0}{redo}: chunked prefill gives each "
                    "request, in order, what it still needs up to the budget left",
                )
            left -= n
        if list(plan) != list(exp.plan):
            self.fail(
                "order",
                f"num_scheduled_tokens must list requests in schedule order (running ones in "
                f"running order, then the admitted): expected {list(exp.plan)}, got {list(plan)}",
            )
        if self.ids("running") != self.model.running:
            self.fail(
                "queues",
                f"the running list must be in admission order: expected {self.model.running}, "
                f"got {self.ids('running')}",
            )

    # ------------------------------------------------------------ after on_step_done()

    def check_done(self, before: Model, exp: Step, users: dict[str, Any], finished: Any) -> None:
        after = {rid: copy.copy(r) for rid, r in before.reqs.items()}
        for rid in exp.preempted:
            after[rid].computed = 0
        sampled, fin = self.model.done(exp.plan)
        for rid, n in exp.plan.items():
            self.check_progress(after[rid], n, users[rid], rid in sampled)
        for r in self.objs("running") + self.objs("waiting"):
            req = after.get(r.request_id)
            if req is None or r.request_id in exp.plan:
                continue
            if (r.num_computed_tokens, r.num_output_tokens) != (req.computed, req.outputs):
                self.fail(
                    "progress",
                    f"on_step_done changed {r.request_id}, which was not scheduled in the step",
                )
        if not isinstance(finished, (list, tuple)):
            self.fail("finish", f"on_step_done() must return a list of ids, got {finished!r}")
        got = list(finished)
        for rid in fin:
            if rid not in got:
                req = before.reqs[rid]
                self.fail(
                    "finish",
                    f"{rid} has generated all max_new_tokens={req.max_new_tokens} tokens but "
                    "on_step_done did not finish it (return its id, drop it from running, free "
                    "its blocks): every request finishes with exactly max_new_tokens",
                )
        for rid in fin:
            table = list(getattr(users.get(rid), "block_ids", []) or [])
            if table:
                self.fail(
                    "leak",
                    f"{rid} finished but its block_ids still hold {table}: give all its blocks "
                    "back to the pool, and its block_ids are then empty",
                )
        for rid in got:
            if rid not in fin:
                req = self.model.reqs.get(rid) or before.reqs.get(rid)
                have = f"after {req.outputs} of {req.max_new_tokens} tokens" if req else ""
                self.fail(
                    "finish",
                    f"on_step_done finished {rid!r} {have}: every request finishes with "
                    "exactly max_new_tokens",
                )
        run_ids, wait_ids = self.ids("running"), self.ids("waiting")
        if run_ids != self.model.running or wait_ids != self.model.waiting:
            self.fail(
                "queues",
                f"after on_step_done running should be {self.model.running} and waiting "
                f"{self.model.waiting} (finished requests leave), got {run_ids} and {wait_ids}",
            )
        held = sum(len(list(r.block_ids)) for r in self.objs("running"))
        free = self.free_blocks()
        if free != self.w.num_blocks - held:
            done = f" ({', '.join(fin)} finished)" if fin else ""
            lost = self.w.num_blocks - held - free
            self.fail(
                "leak",
                f"after on_step_done{done} num_free_blocks() = {free} and {plural(held)} of "
                f"the {self.w.num_blocks} are in block tables, so {plural(lost)} went "
                "missing: a finished request must give back all its blocks",
            )

    def check_progress(self, req: Req, n: int, user: Any, sampled: bool) -> None:
        rid = req.rid
        want_c = req.computed + n
        want_o = req.outputs + (1 if sampled else 0)
        got_o = user.num_output_tokens
        if got_o > want_o and not sampled:
            self.fail(
                "sample-early",
                f"{rid} has num_output_tokens = {got_o} after a step that computed tokens "
                f"{req.computed}..{want_c - 1} of its {req.num_tokens}: no token before the "
                "prompt is fully prefilled (a request samples only in a step that computes "
                "all of its tokens)",
            )
        if got_o != want_o:
            self.fail(
                "sample",
                f"{rid} computed all its {req.num_tokens} tokens, so it samples one: "
                f"num_output_tokens should be {want_o}, is {got_o}",
            )
        if user.num_computed_tokens != want_c:
            self.fail(
                "progress",
                f"num_computed_tokens of {rid} should be {want_c} after the step "
                f"({req.computed} + {n} scheduled), is {user.num_computed_tokens}",
            )


def run(module: ModuleType, w: Workload) -> Checker:
    """Play the whole workload; raise Violation at the first broken property."""
    ck = Checker(module, w)
    pending = sorted(w.requests, key=lambda r: r[3])
    limit = max((t for *_, t in w.requests), default=0)
    limit += sum(p + m for _, p, m, _ in w.requests) + 1
    while pending or ck.model.reqs:
        if ck.step_no > limit:
            ck.fail(
                "livelock",
                f"requests {sorted(ck.model.reqs)} are unfinished after {limit} steps: with "
                "this policy the oldest running request always progresses, so every request "
                "finishes within (last arrival + the sum of prompt_len + max_new_tokens) steps",
            )
        while pending and pending[0][3] <= ck.step_no:
            rid, p, m, _ = pending.pop(0)
            ck.add(rid, p, m)
        ck.step()
    ck.finish()
    return ck
