"""The simulated models' minds: where the edge slips, and the answers to every strategy's inner
calls (each a noisy signal of the hidden draw of whether the edge's step is wrong, never the
draw itself)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from router.context import SUMMARY_PROMPT, earlier_and_recent, flatten
from router.policies.common import function_tool, parse_score, parse_yes_no
from router.policies.entropy import first_token_logprobs, top_entropy
from router.policies.escalation import invalid_tool_call
from router.policies.prompts import ADVICE, BINARY, PLAN, SCORE, VERIFY
from router.policies.sketch import with_plan
from router.protocol.text import task_of
from sim.agent import NO_TOOL_CALL, SYSTEM_PROMPT
from sim.answer import build_answer
from sim.catalog import CATALOG
from sim.prompts import describe
from sim.respond import Responder
from sim.script import NextStep, Role, decide, draw, expected_call
from sim.tasks import Task
from sim.workspace import TOOLS, Workspace

TASKS = {task.id: task for task in CATALOG}
WHOLE = 200_000  # transcript characters: the whole run, as the demo's routes show it
HARD = ("edit", "write", "recover", "final")


@dataclass(frozen=True)
class State:
    task: Task
    seed: int
    messages: list[dict[str, Any]]
    edge: NextStep  # what the edge does here: the hidden truth the signals are checked against


@pytest.fixture(scope="module")
def states() -> list[State]:
    """Every state of runs where the cloud answers about half the steps, so that runs get far."""
    found: list[State] = []
    for seed in range(40):
        for task in CATALOG:
            workspace = Workspace(task)
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": task.message()},
            ]
            for _ in range(task.max_steps):  # as the agent: up to the step limit or the submit
                if workspace.submitted:
                    break
                edge = decide(task, messages, "edge", seed)
                found.append(State(task, seed, list(messages), edge))
                role: Role = "cloud" if draw(seed, task.id, edge.step, "test", "route") < 0.5 else "edge"
                step = edge if role == "edge" else decide(task, messages, "cloud", seed)
                message = build_answer(
                    step, task_id=task.id, role=role, seed=seed, prompt=1, cached=0, latency_scale=0
                ).message
                messages.append(message)
                if not message.get("tool_calls"):
                    messages.append({"role": "user", "content": NO_TOOL_CALL})
                for call in message.get("tool_calls") or []:
                    result = workspace.call(call["function"]["name"], call["function"]["arguments"])
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return found


def _sim(role: Role, seed: int) -> Responder:
    return Responder(role, TASKS, seed, latency_scale=0.0, fixed_latency_s=None)


def _ask(state: State, content: str, role: Role = "edge") -> str:
    answer = _sim(role, state.seed).respond({"messages": [{"role": "user", "content": content}], "max_tokens": 8})
    text: str = answer.message["content"]
    return text


def _auc(positives: list[float], negatives: list[float]) -> float:
    """P(a positive scores above a negative), ties half."""
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def _split(states: list[State], values: list[float]) -> tuple[list[float], list[float]]:
    wrong = [v for s, v in zip(states, values, strict=True) if s.edge.wrong]
    right = [v for s, v in zip(states, values, strict=True) if not s.edge.wrong]
    return wrong, right


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _is_wrong(message: dict[str, Any], state: State) -> bool:
    """Whether an answer's step differs from the right next call."""
    calls = message.get("tool_calls") or []
    expected = expected_call(state.task, state.messages)
    if not calls:
        return True
    function = calls[0]["function"]
    return (function["name"], function["arguments"]) != (expected.tool, expected.arguments)


def _conversation(task: Task, upto: int) -> list[dict[str, Any]]:
    """The messages of a run that followed the plan without a slip for `upto` steps."""
    workspace = Workspace(task)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "test"},
        {"role": "user", "content": task.message()},
    ]
    for index, action in enumerate(task.plan[:upto]):
        arguments = orjson.dumps(action.args).decode()
        call = {
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": action.tool, "arguments": arguments},
        }
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append(
            {
                "role": "tool",
                "tool_call_id": f"call_{index}",
                "content": workspace.call(action.tool, arguments),
            }
        )
    return messages


def _slip_rate(task: Task, upto: int, role: str) -> float:
    messages = _conversation(task, upto)
    draws = [decide(task, messages, role, seed) for seed in range(400)]  # type: ignore[arg-type]
    return sum(step.wrong for step in draws) / len(draws)


def test_edge_slips_on_edits_and_recovery_more_than_on_reads() -> None:
    task = next(t for t in CATALOG if t.id == "fix-median")  # run_tests (fails), read, edit, ...
    assert [a.kind for a in task.plan[:3]] == ["test", "read", "edit"]
    edge_edit = _slip_rate(task, 2, "edge")
    edge_recover = _slip_rate(task, 1, "edge")  # the step after the failing test run
    edge_first = _slip_rate(task, 0, "edge")  # running the tests: as easy as a read
    cloud_edit = _slip_rate(task, 2, "cloud")
    assert edge_first < 0.12 < 0.3 < edge_edit < edge_recover
    assert cloud_edit < 0.08


# -- the strategies' inner calls ---------------------------------------------------------------


def test_states_cover_right_and_wrong_steps_of_every_kind(states: list[State]) -> None:
    assert len(states) > 1000
    assert {s.edge.kind for s in states} == {"read", "search", "test", "edit", "write", "recover", "final"}
    assert 0.15 < sum(s.edge.wrong for s in states) / len(states) < 0.45


def test_entropy_probe_is_a_real_signal_not_an_oracle(states: list[State]) -> None:
    entropies = []
    for state in states:
        body = {"messages": state.messages, "tools": TOOLS, "max_tokens": 1, "logprobs": True, "top_logprobs": 20}
        answer = _sim("edge", state.seed).respond(body)
        assert answer == _sim("edge", state.seed).respond(body)  # the same seed, the same answer
        completion = {"choices": [{"logprobs": answer.logprobs}]}
        logprobs = first_token_logprobs(completion)
        assert logprobs is not None and len(logprobs) == 20
        assert answer.usage["completion_tokens"] == 1 and answer.finish_reason == "length"
        entropies.append(top_entropy(logprobs))
    wrong, right = _split(states, entropies)
    assert 0.65 < _auc(wrong, right) < 0.85
    above = [sum(e > 1.7 for e in side) / len(side) for side in (wrong, right)]
    assert above[0] > 2 * above[1] and above[1] > 0.05  # more often, not always
    assert max(entropies) <= math.log(20)


def test_llm_judge_answers_track_the_step_kind_and_the_hidden_draw(states: list[State]) -> None:
    sample = states[::3]
    verdicts = [parse_yes_no(_ask(s, BINARY + flatten(s.messages, WHOLE))) for s in sample]
    assert None not in verdicts  # a parsable YES or NO, every time
    wrong, right = _split(sample, [float(bool(v)) for v in verdicts])
    assert _mean(wrong) > _mean(right) + 0.3
    hard_right = [
        float(bool(v)) for s, v in zip(sample, verdicts, strict=True) if not s.edge.wrong and s.edge.kind in HARD
    ]
    easy_right = [float(bool(v)) for s, v in zip(sample, verdicts, strict=True) if s.edge.kind not in HARD]
    assert _mean(hard_right) > _mean(easy_right) + 0.1
    scores = [parse_score(_ask(s, SCORE + flatten(s.messages, WHOLE))) for s in sample]
    assert all(score is not None and 0 <= score <= 1 for score in scores)
    wrong, right = _split(sample, [float(score or 0) for score in scores])
    assert 0.7 < _auc(wrong, right) < 0.97


def test_verifier_scores_wrong_drafts_lower(states: list[State]) -> None:
    sample = states[::3]
    scores = []
    for state in sample:
        draft = build_answer(
            state.edge, task_id=state.task.id, role="edge", seed=state.seed, prompt=1, cached=0, latency_scale=0
        ).message
        score = parse_score(_ask(state, VERIFY + flatten([*state.messages, draft], WHOLE)))
        assert score is not None
        scores.append(-score)  # a low score should mean a wrong draft
    wrong, right = _split(sample, scores)
    assert 0.75 < _auc(wrong, right) < 0.98


@pytest.mark.parametrize("tool", ["delegate_to_cloud", "advisor"])
def test_edge_asks_for_help_more_often_when_its_step_would_be_wrong(states: list[State], tool: str) -> None:
    asked = []
    for state in states[::2]:
        body = {"messages": state.messages, "tools": [*TOOLS, function_tool(tool, "help")]}
        message = _sim("edge", state.seed).respond(body).message
        names = [c["function"]["name"] for c in message.get("tool_calls") or []]
        asked.append(float(names == [tool]))
        if names != [tool]:  # not asking, it answers the step as it would without the tool
            alone = _sim("edge", state.seed).respond({"messages": state.messages, "tools": TOOLS}).message
            assert message == alone
    wrong, right = _split(states[::2], asked)
    assert _mean(wrong) > _mean(right) + 0.4 and 0 < _mean(right) < 0.2


def test_advice_names_the_next_step_and_halves_the_edges_mistakes(states: list[State]) -> None:
    alone = advised = 0
    for state in states[::2]:
        prompt = ADVICE.format(words=500, task=task_of(state.messages), transcript=flatten(state.messages, WHOLE))
        advice = _sim("cloud", state.seed).respond({"messages": [{"role": "user", "content": prompt}]})
        expected = expected_call(state.task, state.messages)
        assert describe(expected.tool, expected.args) in advice.message["content"]
        assert advice.usage["completion_tokens"] > 100
        asked = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_adv", "type": "function", "function": {"name": "advisor", "arguments": "{}"}}]}  # fmt: skip
        messages = [
            *state.messages,
            asked,
            {"role": "tool", "tool_call_id": "call_adv", "content": advice.message["content"]},
        ]
        answer = _sim("edge", state.seed).respond({"messages": messages, "tools": TOOLS}).message
        helped_wrong = _is_wrong(answer, state)
        assert not helped_wrong or state.edge.wrong  # advice never makes a right step wrong
        alone += state.edge.wrong
        advised += helped_wrong
    assert 0.35 < advised / alone < 0.65


def test_sketch_plan_is_numbered_and_cuts_the_edges_mistakes(states: list[State]) -> None:
    alone = planned = 0
    for state in states[::2]:
        plan = _ask(state, PLAN.format(steps=8, task=task_of(state.messages)), role="cloud")
        lines = plan.splitlines()
        assert 3 <= len(lines) <= 8 and all(line.startswith(f"{n}. ") for n, line in enumerate(lines, 1))
        body = {"messages": with_plan(state.messages, plan), "tools": TOOLS}
        answer = _sim("edge", state.seed).respond(body).message
        planned += _is_wrong(answer, state)
        alone += state.edge.wrong
    assert 0.55 < planned / alone < 0.85


def test_summary_is_short_and_says_what_was_tried(states: list[State]) -> None:
    long_runs = [s for s in states if s.edge.step > 6][:50]
    assert long_runs
    for state in long_runs:
        _head, earlier, _recent = earlier_and_recent(state.messages, 2)
        summary = _ask(state, SUMMARY_PROMPT + flatten(earlier, 24_000))
        assert summary.startswith("Tried so far:") and len(summary.split()) <= 200
        first = next(m for m in earlier if m.get("tool_calls"))["tool_calls"][0]["function"]["name"]
        assert describe(first, None).split()[0] in summary


def test_some_edge_mistakes_are_invalid_tool_calls_escalation_can_catch(states: list[State]) -> None:
    invalid = {True: 0, False: 0}
    for state in states:
        message = build_answer(
            state.edge, task_id=state.task.id, role="edge", seed=state.seed, prompt=1, cached=0, latency_scale=0
        ).message
        if invalid_tool_call({"choices": [{"message": message}]}, TOOLS) is not None:
            invalid[state.edge.wrong] += 1
    assert invalid[False] == 0  # a right step is always a valid call
    assert invalid[True] > 0.15 * sum(s.edge.wrong for s in states)
