"""The strategies' inner prompts as a simulated model recognises and answers them: the LLM judge
(YES/NO or a score), the draft verifier's score, the advisor's advice, the sketch's plan and
the summary of earlier steps for the cloud's context.

The prompts are recognised by the gateway's public constants (`router.policies.prompts`, and
`router.context` for the summary), so the simulation follows them when they change. The judge
and the verifier answer with the noisy signals of `signals.py`; advice, plans and summaries are
written from what the prompt shows (the task, the transcript).
"""

from __future__ import annotations

import re
from typing import Any

from router.context import SUMMARY_PROMPT
from router.policies.prompts import ADVICE, BINARY, PLAN, SCORE, VERIFY
from router.protocol.text import text_of
from sim.script import Call, decide, expected_call, parse_call
from sim.signals import judge_says_cloud, judge_score, verify_score
from sim.tasks import Args, Task
from sim.transcript import Messages, find_task_in, rebuild, task_named_in
from sim.workspace import is_error

# purpose -> the text an inner prompt starts with (the part of a template before its first field).
PROMPTS: dict[str, str] = {
    "judge": BINARY,
    "judge_score": SCORE,
    "verify": VERIFY,
    "advice": ADVICE.split("{", 1)[0],
    "plan": PLAN.split("{", 1)[0],
    "summary": SUMMARY_PROMPT,
}


def prompt_purpose(messages: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(purpose, the text after the prompt) when the request is one of the strategies' prompts."""
    if len(messages) != 1 or messages[0].get("role") != "user":
        return None
    text = text_of(messages[0].get("content"))
    for purpose, prefix in PROMPTS.items():
        if text.startswith(prefix):
            return purpose, text[len(prefix) :]
    return None


def describe(tool: str, args: Args | None) -> str:
    """A tool call in words, as a plan or a piece of advice would put it."""
    args = args or {}
    path = args.get("path", "the file")
    if tool == "read_file":
        return f"read {path}"
    if tool == "search":
        return f"search the workspace for {args.get('pattern', '')!r}"
    if tool == "edit_file":
        first = (args.get("old") or "").strip().splitlines()[:1]
        where = f" at `{first[0]}`" if first else ""
        return f"edit {path}{where}, copying the old text exactly as read"
    if tool == "write_file":
        return f"write {path} with the new test"
    if tool == "run_tests":
        return "run the test suite"
    if tool == "submit":
        return "call submit with a one-sentence summary"
    return f"call {tool}"


def _last_result(messages: Messages) -> str:
    """What the model was last told (a tool result, or the agent's complaint); "" before that."""
    for message in reversed(messages):
        if message.get("role") in ("tool", "user"):
            return text_of(message.get("content"))
        if message.get("role") == "assistant":
            break
    return ""


class PromptAnswers:
    """Answers the inner prompts for one simulation (its tasks and seed)."""

    def __init__(self, tasks: dict[str, Task], seed: int) -> None:
        self.tasks = tasks
        self.seed = seed

    def answer(self, purpose: str, rest: str) -> str:
        handler = getattr(self, f"_{purpose}")
        text: str = handler(rest)
        return text

    def _judge(self, rest: str, binary: bool = True) -> str:
        messages = rebuild(rest)
        task = find_task_in(messages, self.tasks)
        if task is None:
            # Nothing to place the step by: judge from the last result alone.
            failing = is_error(_last_result(messages))
            return ("YES" if failing else "NO") if binary else ("0.7" if failing else "0.3")
        step = decide(task, messages, "edge", self.seed)
        if binary:
            return "YES" if judge_says_cloud(step, self.seed, task.id) else "NO"
        return f"{judge_score(step, self.seed, task.id):.2f}"

    def _judge_score(self, rest: str) -> str:
        return self._judge(rest, binary=False)

    def _verify(self, rest: str) -> str:
        messages = rebuild(rest)
        if not messages or messages[-1].get("role") != "assistant":
            return "0.5"
        proposal, before = messages[-1], messages[:-1]
        task = find_task_in(before, self.tasks)
        if task is None:
            return "0.5"
        expected = expected_call(task, before)
        calls = proposal.get("tool_calls") or []
        drafted = parse_call(calls[0]) if calls else None
        wrong = drafted is None or (drafted.tool, drafted.args) != (expected.tool, expected.args)
        step = sum(m.get("role") == "assistant" for m in before) + 1
        return f"{verify_score(wrong, self.seed, task.id, step):.2f}"

    def _advice(self, rest: str) -> str:
        head, _, transcript = rest.partition("\n\nTRANSCRIPT:\n")
        messages = rebuild(transcript)
        task = find_task_in(messages, self.tasks) or task_named_in(head, self.tasks)
        if task is None:
            return "Re-read the task, check each tool result for errors, and make one small change at a time."
        call = expected_call(task, messages)
        last = _last_result(messages)
        situation = (
            f"Your last call failed: {last.splitlines()[0][:160]}. Do not repeat it unchanged."
            if is_error(last)
            else "Your last call worked; keep going."
        )
        return " ".join(
            [
                f"You are working on: {task.title}.",
                situation,
                f"Next, {describe(call.tool, call.args)}.",
                self._rest_of_plan(task, call),
                "Edits replace exact text: copy `old` from what you read, including indentation and "
                "the trailing newline. Run the tests after every change and read each failure before "
                "changing code again. Call submit only once the tests pass.",
            ]
        )

    @staticmethod
    def _rest_of_plan(task: Task, call: Call) -> str:
        index = next((i for i, a in enumerate(task.plan) if (a.tool, a.args) == (call.tool, call.args)), None)
        later = task.plan[index + 1 :] if index is not None else ()
        if not later:
            return ""
        return "After that: " + "; ".join(describe(a.tool, a.args) for a in later) + "."

    def _plan(self, rest: str) -> str:
        limit = re.match(r"\s*(\d+)", rest)
        most = int(limit[1]) if limit else 8
        task = task_named_in(rest, self.tasks)
        if task is None:
            return "1. Read the relevant files.\n2. Make the change.\n3. Run the tests.\n4. Submit."
        actions = [describe(a.tool, a.args) for a in task.plan]
        if len(actions) > most:
            actions = [*actions[: most - 1], " then ".join(actions[most - 1 :])]
        return "\n".join(f"{number}. {text[0].upper()}{text[1:]}." for number, text in enumerate(actions, 1))

    def _summary(self, rest: str) -> str:
        messages = rebuild(rest)
        results = {m.get("tool_call_id"): text_of(m.get("content")) for m in messages if m.get("role") == "tool"}
        done = []
        for message in messages:
            for tool_call in message.get("tool_calls") or []:
                call = parse_call(tool_call)
                result = results.get(tool_call["id"], "").strip().splitlines()
                outcome = result[0][:80] if result else "no result"
                done.append(f"{describe(call.tool, call.args)} -> {outcome}")
        if not done:
            return "No tool calls yet."
        words = "Tried so far: " + "; ".join(done[-12:]) + "."
        last = done[-1]
        status = "The last step failed; fix its cause next." if "error" in last or "failed" in last else "On track."
        return " ".join(words.split()[:180]) + " " + status
