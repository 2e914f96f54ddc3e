"""The simulated models' minds: read a conversation, decide the agent's next step.

A simulated model finds the task from the first user message, replays the conversation against
the task's plan to see how far the work has got, and answers with the next tool call. With a
draw seeded by (seed, task, step, role) it gets the step wrong instead, more often on the edge
and more often for some kinds of step: that is what "the cloud is stronger" means here, and the
same seed always gives the same mistakes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from sim.tasks import Action, Args, Kind, Task
from sim.workspace import is_error

Role = Literal["edge", "cloud"]

# Probability that a step of each kind goes wrong. The edge slips on edits and on recovering
# from an error far more than on reads; the cloud rarely slips at all.
ERROR_RATES: dict[Role, dict[Kind, float]] = {
    "edge": {
        "read": 0.05,
        "search": 0.05,
        "test": 0.05,
        "edit": 0.45,
        "write": 0.45,
        "recover": 0.60,
        "final": 0.20,
    },
    "cloud": {kind: 0.03 for kind in ("read", "search", "test", "edit", "write", "recover", "final")},
}


def draw(seed: int, task_id: str, step: int, role: str, purpose: str) -> float:
    """A uniform number in [0, 1) fixed by its inputs (no process-wide random state)."""
    digest = hashlib.sha256(f"{seed}:{task_id}:{step}:{role}:{purpose}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass(frozen=True)
class Call:
    tool: str
    args: Args | None  # None: the arguments were not a JSON object
    # The arguments as the model wrote them, when they are not valid JSON (a cut-off answer).
    raw: str | None = None

    @property
    def arguments(self) -> str:
        """The `arguments` string of the tool call."""
        if self.raw is not None:
            return self.raw
        return "{" if self.args is None else orjson.dumps(self.args).decode()


@dataclass
class Progress:
    """How far the conversation has got through the plan."""

    pointer: int = 0  # index of the next plan action
    broken: list[Args] = field(default_factory=list)  # calls that repair wrong edits in the files
    last_ok: bool = True
    last_call: Call | None = None
    steps: int = 0  # assistant messages so far


@dataclass(frozen=True)
class NextStep:
    step: int  # 1-based index of this step in the trajectory
    kind: Kind
    wrong: bool
    call: Call | None  # None: a text answer with no tool call
    thought: str


def parse_call(tool_call: dict[str, Any]) -> Call:
    function = tool_call.get("function") or {}
    try:
        args = orjson.loads(function.get("arguments") or "{}")
    except orjson.JSONDecodeError:
        args = None
    return Call(str(function.get("name")), args if isinstance(args, dict) else None)


def replay(task: Task, messages: list[dict[str, Any]]) -> Progress:
    """Walk the conversation's tool calls and their results along the task's plan."""
    progress = Progress()
    results = {m.get("tool_call_id"): str(m.get("content") or "") for m in messages if m.get("role") == "tool"}
    for message in messages:
        if message.get("role") == "user" and progress.steps:
            # A user message after the start is the agent's complaint about the last answer.
            progress.last_ok = not is_error(str(message.get("content") or ""))
        if message.get("role") != "assistant":
            continue
        progress.steps += 1
        tool_calls = message.get("tool_calls") or []
        if not tool_calls:
            progress.last_call = None
            continue
        call = parse_call(tool_calls[0])
        ok = not is_error(results.get(tool_calls[0].get("id"), "error: no result"))
        _advance(task, progress, call, ok)
        progress.last_ok, progress.last_call = ok, call
    return progress


def _advance(task: Task, progress: Progress, call: Call, ok: bool) -> None:
    if ok and call.args in progress.broken:
        progress.broken.remove(call.args)
        return
    if progress.pointer >= len(task.plan):
        return
    planned = task.plan[progress.pointer]
    if call.tool != planned.tool:
        return
    if call.args == planned.args and (ok or planned.expect_fail):
        progress.pointer += 1
    elif ok and planned.buggy is not None and call.args == planned.buggy:
        # The wrong version went in without complaint; the tests will tell later.
        progress.broken.append(planned.fix())
        progress.pointer += 1


def _situation(task: Task, progress: Progress) -> tuple[Action, Call, Kind]:
    """The plan's next action, the call a competent model makes now, and the kind of step."""
    planned = task.plan[min(progress.pointer, len(task.plan) - 1)]
    intended = Call(planned.tool, planned.args)
    kind: Kind = planned.kind
    if not progress.last_ok:
        kind = "recover"
        if progress.broken:
            fix = progress.broken[0]
            intended = Call("edit_file" if "old" in fix else "write_file", fix)
    return planned, intended, kind


def expected_call(task: Task, messages: list[dict[str, Any]]) -> Call:
    """The right next call in this conversation (what a step that is not wrong does)."""
    return _situation(task, replay(task, messages))[1]


def decide(task: Task, messages: list[dict[str, Any]], role: Role, seed: int, *, error_scale: float = 1.0) -> NextStep:
    """The next step a `role` model takes in this conversation, right or wrong.

    `error_scale` < 1 models help the model got (advice, a plan): the same draw is compared with
    a lower rate, so a helped model gets wrong only a subset of the steps it gets wrong alone."""
    progress = replay(task, messages)
    planned, intended, kind = _situation(task, progress)
    step = progress.steps + 1
    wrong = draw(seed, task.id, step, role, "error") < ERROR_RATES[role][kind] * error_scale
    if not wrong:
        return NextStep(step, kind, False, intended, _thought(kind, intended))
    variant = draw(seed, task.id, step, role, "variant")
    call = _mistake(kind, planned, intended, progress, variant)
    return NextStep(step, kind, True, call, _thought(kind, call))


def _mistake(kind: Kind, planned: Action, intended: Call, progress: Progress, variant: float) -> Call | None:
    """A plausible wrong step of this kind: what small models are seen to do."""
    args = intended.args or {}
    if kind == "recover":
        if variant < 1 / 3 and progress.last_call is not None:
            return progress.last_call  # retry the failing call unchanged
        if variant < 2 / 3:
            return Call("apply_patch", {"patch": f"--- a/{args.get('path', 'src')}\n+++ b/..."})
        return Call("submit", {"summary": "The remaining failure looks flaky; the change is done."})
    if kind in ("edit", "write") and planned.buggy is not None:
        if variant < 0.5:
            return Call(intended.tool, planned.buggy)
        if variant < 0.75:
            return _cut_off(intended.tool, args)
        # The classic failed edit: whitespace that does not match the file, or a missing argument.
        broken_args = dict(args)
        broken_args.pop("content", None)
        if "old" in broken_args:
            broken_args["old"] = broken_args["old"].rstrip("\n") + " "
        return Call(intended.tool, broken_args)
    if kind == "final":
        return None  # answers in prose and forgets to call submit
    if variant < 0.3:
        return _cut_off(intended.tool, {**args, "path": args.get("path", "src/")})
    if kind == "test":
        return Call("run_tests", {"path": "test/"})
    if kind == "search":
        return Call("search", {**args, "path": "lib/"})
    # Reads a path from the repository layout it assumed rather than the one it was shown.
    return Call(intended.tool, {**args, "path": "app/" + args.get("path", "")})


def _cut_off(tool: str, args: Args) -> Call:
    """Arguments cut off mid-JSON: a small model's tool call when it loses the thread in long
    arguments (invalid before any tool runs: the escalation strategy catches these)."""
    text = orjson.dumps(args).decode()
    return Call(tool, None, raw=text[: max(2, len(text) // 2)])


def _thought(kind: Kind, call: Call | None) -> str:
    if call is None:
        return "I have made the change and I believe the task is complete."
    path = (call.args or {}).get("path", "")
    return {
        "read": f"Let me read {path} to see the current code.",
        "search": f"I'll search the workspace for {(call.args or {}).get('pattern', '')!r}.",
        "edit": f"Now I'll make the change in {path}.",
        "write": f"I'll write {path}.",
        "test": "Let me run the test suite.",
        "final": "The tests pass; submitting.",
        "recover": "That did not work; let me correct course.",
    }[kind]
