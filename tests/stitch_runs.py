"""Random agent runs for the stitching property test (issue 30), and the tally of where their
steps went.

A run is a tool loop: the system prompt and task are drawn from a few (so that many runs send
byte-identical first requests), every answer is drawn at random (tool calls with random ids and
arguments, or text), and some histories are rewritten between steps as clients do: Aider-like
(an earlier message edited in place, a reflection appended), compaction-like (the middle
replaced by a summary, the last answer and its result kept), and the answer dropped
(smolagents-like: an error appended to the last user message; mini-swe-agent-like: a user
message of the client's own after the history). A schedule interleaves the runs'
requests and answers in a random order, with client retries: an attempt that fails or is cut
off is sent again, and an SDK retry (`x-stainless-retry-count`) may come while the first attempt
is still in flight.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Messages = list[dict[str, Any]]
SYSTEMS = ["You are a coding agent. Use the tools. " * 12, "Act as an expert software developer. " * 12]
TASKS = ["fix the failing test in tests/test_app.py", "add a --verbose flag to the cli"]
TOOLS = ["bash", "str_replace_editor", "read_file"]
COMMANDS = ["ls", "pytest -q", "cat setup.py", "git diff", "python -m app"]
OUTPUTS = ["ok", "1 failed", "", "Traceback (most recent call last):", "done"]
SHORT = ["ok", "Let me look.", "done"]  # answers any run may give


@dataclass
class Step:
    messages: Messages  # what the client sends
    answer: dict[str, Any]  # what it is answered
    expect: str  # how it should be stitched: new, extended or rewritten


@dataclass
class Run:
    index: int
    user: str | None  # the request's `user`, when the run's client sends one
    steps: list[Step]


def _answer(rng: random.Random, must_call: bool) -> dict[str, Any]:
    if must_call or rng.random() < 0.75:
        arguments = f'{{"command": "{rng.choice(COMMANDS)}", "n": {rng.randint(0, 3)}}}'
        call = {
            "id": f"call_{rng.getrandbits(64):016x}",
            "type": "function",
            "function": {"name": rng.choice(TOOLS), "arguments": arguments},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": rng.choice(SHORT)}


def _result(rng: random.Random, answer: dict[str, Any]) -> dict[str, Any]:
    calls = answer.get("tool_calls")
    if calls:
        return {"role": "tool", "tool_call_id": calls[0]["id"], "content": rng.choice(OUTPUTS)}
    return {"role": "user", "content": rng.choice(OUTPUTS)}


def _rewrite(rng: random.Random, history: Messages) -> Messages:
    """The history as a client rewrites it, its last answer and that answer's result kept."""
    if rng.random() < 0.5:  # Aider-like: an earlier message edited in place, a reflection after
        out = copy.deepcopy(history)
        index = rng.randrange(2, len(out) - 2)
        out[index]["content"] = f"(refreshed) {out[index].get('content') or ''} {rng.getrandbits(32)}"
        if rng.random() < 0.5:
            # Aider's test reflection: its own messages after the answer, each acknowledged by
            # an "Ok." it writes itself, so the last assistant message is not the model's.
            out += [
                {"role": "assistant", "content": "Ok."},
                {"role": "user", "content": "I ran this command: make test"},
            ]
        return [*out, {"role": "user", "content": "Fix these lint errors: E501 line too long"}]
    summary = {"role": "user", "content": f"Summary of the earlier steps: {rng.getrandbits(32)}"}
    return [*history[:2], summary, *history[-2:]]  # compaction-like


def _dropped(rng: random.Random, history: Messages, answer: dict[str, Any]) -> Messages:
    """The history after an answer the client dropped: smolagents-like (a tool call that raised),
    its error appended to the last user message; mini-swe-agent-like, a user message of its own
    after the history."""
    last = history[-1]
    amendable = last["role"] == "user" and isinstance(last.get("content"), str) and last["content"]
    if amendable and answer.get("tool_calls") and rng.random() < 0.5:
        error = f"\nError:\nError executing tool 'bash': {rng.getrandbits(32)}\nNow let's retry"
        return [*history[:-1], {**last, "content": last["content"] + error}]
    return [*history, {"role": "user", "content": f"Tool call error: no tool calls found {rng.getrandbits(32)}"}]


def make_runs(rng: random.Random, count: int, max_steps: int, rewrites: float = 0.2) -> list[Run]:
    runs = []
    for index in range(count):
        system, task = rng.choice(SYSTEMS), rng.choice(TASKS)
        history: Messages = [{"role": "system", "content": system}, {"role": "user", "content": task}]
        user = rng.choice([None, None, "alice", "bob"])
        steps = []
        expect = "new"
        for number in range(rng.randint(1, max_steps)):
            # The first answer is a tool call (its id random): runs with the same first request
            # are told apart from their second step on.
            answer = _answer(rng, must_call=number == 0)
            steps.append(Step(copy.deepcopy(history), answer, expect))
            if number >= 1 and rng.random() < rewrites / 2:
                # The answer dropped by the client (after the first answer: runs alike are told
                # apart by then; before it nothing tells them apart, and none is taken).
                history, expect = _dropped(rng, history, answer), "rewritten"
                continue
            history = [*history, answer, _result(rng, answer)]
            expect = "extended"
            if number >= 1 and answer.get("tool_calls") and rng.random() < rewrites:
                history, expect = _rewrite(rng, history), "rewritten"
        runs.append(Run(index, user, steps))
    return runs


@dataclass(frozen=True)
class Event:
    run: int
    step: int
    # send; sdk_retry (sent again while in flight, with the retry header); given_up (the answer
    # to the attempt an sdk_retry replaced, cut off); fail (an attempt answered with an error or
    # cut off, sent again at once); answer (delivered)
    kind: str
    status: str = "ok"  # of a fail: error or cancelled
    retry_header: bool = False  # of a fail's new attempt: x-stainless-retry-count > 0


def schedule(rng: random.Random, runs: list[Run]) -> list[Event]:
    """The runs' events interleaved at random, each run's in order: a step is sent, maybe sent
    again by the SDK while in flight, answered; a failed or cut-off attempt is sent again."""
    queues: list[list[Event]] = []
    for run in runs:
        events: list[Event] = []
        for number in range(len(run.steps)):
            events.append(Event(run.index, number, "send"))
            if rng.random() < 0.08:
                events.append(Event(run.index, number, "sdk_retry"))
                events.append(Event(run.index, number, "given_up"))
            for _ in range(2):
                if rng.random() < 0.15:
                    status = rng.choice(["error", "cancelled"])
                    events.append(Event(run.index, number, "fail", status, retry_header=rng.random() < 0.5))
            events.append(Event(run.index, number, "answer"))
        queues.append(events)
    out = []
    while any(queues):
        queue = rng.choice([q for q in queues if q])
        out.append(queue.pop(0))
    return out


# find(messages, retry, user) -> (trajectory id, how); answered(trajectory id, status, answer message)
Find = Callable[[Messages, bool, str | None], Awaitable[tuple[str, str, Any]]]
Answered = Callable[[Any, str, dict[str, Any]], Awaitable[None]]


@dataclass
class Tally:
    schedules: int = 0
    runs: int = 0
    steps: int = 0
    attempts: int = 0
    false_joins: int = 0  # runs whose steps went to a trajectory another run's steps went to
    false_splits: int = 0  # extra trajectories a run's steps were spread over
    wrong_decisions: int = 0  # x-tandem-stitch other than the step's kind (retries: "retry")
    rewrites: int = 0
    rewrites_joined: int = 0
    skipped: int = 0  # SDK retries not played: an older identical attempt would time out first
    decisions: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        return (
            f"{self.schedules} schedules, {self.runs} runs, {self.steps} steps, {self.attempts} attempts: "
            f"false joins {self.false_joins}, false splits {self.false_splits}, "
            f"rewrites joined {self.rewrites_joined}/{self.rewrites}, wrong decisions {self.wrong_decisions}"
        )


async def play(runs: list[Run], events: list[Event], find: Find, answered: Answered, tally: Tally) -> None:
    """Play a schedule; tally where each run's steps went (each step's first attempt, and every
    attempt of a step must go where that step went).

    An SDK retries when its attempt times out: of identical requests in flight (runs with the
    same first request), the oldest times out first. An `sdk_retry` that would come before an
    older identical attempt's is not played (counted in `tally.skipped`)."""
    placed: dict[tuple[int, int], str] = {}
    pending: dict[tuple[int, int], list[tuple[int, Any]]] = {}  # attempts in flight: (order, handle)
    skipped: set[tuple[int, int]] = set()
    order = 0

    async def send(where: tuple[int, int], retry: bool) -> None:
        nonlocal order
        run, step = runs[where[0]], runs[where[0]].steps[where[1]]
        trajectory_id, how, handle = await find(step.messages, retry, run.user)
        order += 1
        pending.setdefault(where, []).append((order, handle))
        tally.attempts += 1
        tally.decisions[how] = tally.decisions.get(how, 0) + 1
        first = where not in placed
        if first:
            placed[where] = trajectory_id
            tally.steps += 1
            if step.expect == "rewritten":
                tally.rewrites += 1
                tally.rewrites_joined += how == "rewritten"
        if how != (step.expect if first else "retry"):
            tally.wrong_decisions += 1
        if placed[where] != trajectory_id:
            tally.false_splits += 1  # an attempt filed apart from its step

    def older_twin(where: tuple[int, int]) -> bool:
        run = runs[where[0]]
        mine = pending[where][0][0]
        for other, attempts in pending.items():
            twin = runs[other[0]]
            same = twin.user == run.user and twin.steps[other[1]].messages == run.steps[where[1]].messages
            if other != where and attempts and attempts[0][0] < mine and same:
                return True
        return False

    for event in events:
        where = (event.run, event.step)
        answer = runs[event.run].steps[event.step].answer
        if event.kind == "send":
            await send(where, False)
        elif event.kind == "sdk_retry":
            if older_twin(where):
                skipped.add(where)
                tally.skipped += 1
            else:
                await send(where, True)
        elif event.kind == "given_up":
            if where in skipped:
                skipped.discard(where)
            else:
                await answered(pending[where].pop(0)[1], "cancelled", answer)
        elif event.kind == "fail":
            await answered(pending[where].pop(0)[1], event.status, answer)
            await send(where, event.retry_header)
        else:
            await answered(pending[where].pop(0)[1], "ok", answer)
    owners: dict[str, set[int]] = {}
    for run in runs:
        trajectories = {placed[(run.index, n)] for n in range(len(run.steps))}
        tally.false_splits += len(trajectories) - 1
        for trajectory_id in trajectories:
            owners.setdefault(trajectory_id, set()).add(run.index)
    tally.false_joins += sum(len(owner) - 1 for owner in owners.values())
    tally.schedules += 1
    tally.runs += len(runs)
