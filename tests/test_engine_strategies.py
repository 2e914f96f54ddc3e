"""Every strategy's decision path in process (tests/inprocess.py): what each upstream was asked,
the step's facts, and the inner calls its record keeps. The same cases as the socket suite's
tests/test_strategies.py, without sockets."""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest

from router.ledger import StepRecord
from router.result import Answer, Stream
from tests.inprocess import InProcess, drain, engine_settings, events, in_process
from tests.test_strategies import TASK, TOOLS

OK = {"role": "assistant", "content": "ok"}


def route(**strategy: Any) -> Any:
    return engine_settings(routes={"tandem": strategy})


async def ask(env: InProcess, session: str = "s1", messages: list[dict[str, Any]] | None = None, **body: Any) -> Answer:
    result = await env.run(session=session, messages=messages or [TASK], tools=TOOLS, **body)
    assert isinstance(result, Answer), result
    return result


def decided(result: Answer) -> tuple[str, str]:
    return result.facts.target, result.facts.reason


def message(result: Answer) -> dict[str, Any]:
    found: dict[str, Any] = result.completion["choices"][0]["message"]
    return found


async def last_record(env: InProcess, session: str = "s1") -> StepRecord:
    return (await env.records(session))[-1]


async def test_random_is_seedable_and_reports_its_draw() -> None:
    async def targets(seed: int) -> list[str]:
        async with in_process(route(strategy="random", p=0.5, seed=seed)) as env:
            out: list[str] = []
            for turn in range(20):
                result = await ask(env, "seeded", [TASK, *[OK] * turn])
                assert result.facts.reason == "random_draw" and result.facts.score is not None
                assert 0 <= result.facts.score < 1
                out.append(result.facts.target)
            assert len(env.cloud.received) == out.count("cloud")
            return out

    first, again = await targets(11), await targets(11)
    assert first == again and {"edge", "cloud"} <= set(first)


async def test_task_routing_decides_once_per_run() -> None:
    async with in_process(route(strategy="task", cloud_if_matches=r"\brefactor\b")) as env:
        hard = [{"role": "user", "content": "Refactor the parser module"}]
        for turn in range(3):
            assert decided(await ask(env, "hard", [*hard, *[OK] * turn])) == ("cloud", "task_routed")
        for turn in range(2):
            assert (await ask(env, "easy", [TASK, *[OK] * turn])).facts.target == "edge"
        assert len(env.cloud.received) == 3 and len(env.edge.received) == 2
        trajectory = await env.engine.tracker.store.get("hard")
        assert trajectory is not None and trajectory.notes["strategy:task:target"] == "cloud"
        # The task strategy's note, and the ledger's prompt-cache prefix, each in its owner's namespace.
        assert trajectory.as_dict()["notes"].keys() == {"strategy:task:target", "ledger:cache_prefix"}


async def test_entropy_probe_sends_uncertain_steps_to_the_cloud() -> None:
    settings = engine_settings(
        routes={"tandem": {"strategy": "entropy", "threshold": 1.7}},
        upstream_overrides={"edge": {"inner_call_params": {"chat_template_kwargs": {"enable_thinking": False}}}},
    )
    async with in_process(settings) as env:
        env.edge.push({"top_logprobs": [math.log(1 / 20)] * 20})  # flat: entropy ln 20 ≈ 3.0
        result = await ask(env, max_tokens=300)
        assert decided(result) == ("cloud", "entropy")
        assert result.facts.score == pytest.approx(math.log(20), abs=1e-3)
        probe = env.edge.received[0].body
        assert (probe["max_tokens"], probe["logprobs"], probe["top_logprobs"], probe["stream"]) == (1, True, 20, False)
        assert probe["chat_template_kwargs"] == {"enable_thinking": False}  # the edge's inner_call_params
        sent = env.cloud.received[0].body
        assert sent["max_tokens"] == 300 and "logprobs" not in sent and "chat_template_kwargs" not in sent
        assert [c.purpose for c in (await last_record(env)).inner] == ["probe"]

        env.edge.push({"top_logprobs": [0.0] + [-20.0] * 19}, {"text": "confident"})  # peaked: entropy ≈ 0
        result = await ask(env, "t2")
        assert result.facts.target == "edge" and message(result)["content"] == "confident"
        assert result.facts.score is not None and result.facts.score < 0.01


async def test_entropy_without_logprobs_takes_the_fallback() -> None:
    async with in_process(route(strategy="entropy", fallback="cloud")) as env:
        env.edge.push({"text": "no logprobs here"})
        assert decided(await ask(env)) == ("cloud", "inner_call_failed")
        assert (await last_record(env)).inner[0].status == "no_logprobs"


@pytest.mark.parametrize(
    ("reply", "target", "reason"),
    [
        ("YES", "cloud", "llm_judge"),
        ("No, the edge can do this.", "edge", "llm_judge"),
        ("I am not sure", "cloud", "inner_call_failed"),
    ],
)
async def test_llm_judge_binary(reply: str, target: str, reason: str) -> None:
    async with in_process(route(strategy="llm_judge", judge="edge", mode="binary", sees="task")) as env:
        env.edge.push({"text": reply})
        assert decided(await ask(env)) == (target, reason)
        judged = env.edge.received[0].body["messages"]
        assert len(judged) == 1 and "Fix the failing test in calc.py" in judged[0]["content"]
        assert len(env.cloud.received) == (1 if target == "cloud" else 0)


async def test_llm_judge_score_on_a_third_upstream() -> None:
    settings = engine_settings(
        routes={"tandem": {"strategy": "llm_judge", "judge": "referee", "mode": "score", "threshold": 0.6}},
        upstream_overrides={"referee": {"base_url": "http://referee.invalid/v1", "model": "referee-model"}},
    )
    async with in_process(settings) as env:
        referee = env.transports["referee"]
        referee.push({"text": "0.8"}, {"text": "40%"})
        result = await ask(env)
        assert result.facts.target == "cloud" and result.facts.headers()["x-tandem-score"] == "0.8"
        assert referee.received[0].body["model"] == "referee-model"
        assert env.cloud.received[0].body["model"] == "cloud-model"
        assert (await ask(env, "t2")).facts.target == "edge"
        assert len(env.cloud.received) == 1


async def test_draft_accepted_is_relayed_and_rejected_is_regenerated() -> None:
    async with in_process(route(strategy="draft_verify", verifier="edge", threshold=0.5)) as env:
        env.edge.push({"kind": "tool_call", "arguments": '{"command": "pytest"}'}, {"text": "0.9"})
        result = await ask(env)
        assert decided(result) == ("edge", "draft_accepted") and not env.cloud.received
        assert message(result)["tool_calls"][0]["function"]["arguments"] == '{"command": "pytest"}'
        assert "pytest" in env.edge.received[1].body["messages"][0]["content"]  # the verifier saw the draft

        env.edge.push({"kind": "tool_call", "arguments": '{"command": "rm -rf /"}'}, {"text": "0.05"})
        result = await ask(env, "t2")
        assert decided(result) == ("cloud", "draft_rejected")
        assert env.cloud.received[0].body["messages"] == [TASK]
        record = await last_record(env, "t2")
        assert [c.purpose for c in record.inner] == ["draft", "verify"]
        assert record.cost_usd > 0 and all(c.cost_usd > 0 for c in record.inner)


async def test_a_prepared_answer_streams_as_chunks_with_its_usage() -> None:
    async with in_process(route(strategy="draft_verify")) as env:
        env.edge.push({"kind": "tool_call", "arguments": '{"command": "ls"}', "completion_tokens": 9}, {"text": "1"})
        result = await env.run(messages=[TASK], tools=TOOLS, stream=True)
        assert isinstance(result, Stream) and result.facts.reason == "draft_accepted"
        chunks = events(await drain(result))
        assert chunks[-1] == "[DONE]"
        calls = [c for e in chunks[:-1] for ch in e["choices"] for c in ch["delta"].get("tool_calls", [])]
        assert "".join(c["function"].get("arguments", "") for c in calls) == '{"command": "ls"}'
        assert [e["usage"]["completion_tokens"] for e in chunks[:-1] if e.get("usage")] == [9]
        assert all(not r.body.get("stream") for r in env.edge.received)  # inner calls never stream


async def test_self_delegation_both_ways() -> None:
    async with in_process(route(strategy="self_delegation", marker="[[CLOUD]]")) as env:
        env.edge.push({"kind": "tool_call", "name": "delegate_to_cloud", "arguments": "{}"})
        assert decided(await ask(env)) == ("cloud", "self_delegated")
        assert [t["function"]["name"] for t in env.edge.received[0].body["tools"]] == ["bash", "delegate_to_cloud"]
        assert env.cloud.received[0].body["tools"] == TOOLS  # the agent never sees the extra tool

        env.edge.push({"text": "this is hard [[CLOUD]]"})
        assert decided(await ask(env, "t2")) == ("cloud", "self_delegated")

        env.edge.push({"kind": "tool_call", "name": "bash", "arguments": '{"command": "ls"}'})
        result = await ask(env, "t3")
        assert decided(result) == ("edge", "edge_answered") and len(env.cloud.received) == 2
        assert message(result)["tool_calls"][0]["function"]["name"] == "bash"


async def test_a_failed_inner_call_falls_back_and_is_recorded() -> None:
    async with in_process(route(strategy="self_delegation")) as env:
        env.edge.push({"kind": "status", "status": 500})
        result = await env.run(messages=[TASK], tools=TOOLS, stream=True)
        assert isinstance(result, Stream)
        assert (result.facts.target, result.facts.reason) == ("cloud", "inner_call_failed")
        assert events(await drain(result))[-1] == "[DONE]"
        assert (await last_record(env)).inner[0].status == "error"


async def test_advisor_round_trip_is_one_agent_step() -> None:
    async with in_process(route(strategy="advisor", max_words=100)) as env:
        env.edge.push(
            {"kind": "tool_call", "name": "advisor", "arguments": "{}"},
            {"kind": "tool_call", "name": "bash", "arguments": '{"command": "pytest -x"}'},
        )
        env.cloud.push({"text": "Run the failing test alone first."})
        call = {"id": "c0", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
        history: list[dict[str, Any]] = [
            TASK,
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c0", "content": "calc.py test_calc.py"},
        ]
        result = await ask(env, messages=history)
        assert result.facts.reason == "advised" and result.facts.step == 1
        assert message(result)["tool_calls"][0]["function"]["arguments"] == '{"command": "pytest -x"}'
        advice_prompt = env.cloud.received[0].body["messages"][0]["content"]
        assert "Fix the failing test in calc.py" in advice_prompt and "calc.py test_calc.py" in advice_prompt
        final = env.edge.received[1].body
        assert [t["function"]["name"] for t in final["tools"]] == ["bash"]
        assert final["messages"][-1] == {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "Run the failing test alone first.",
        }
        record = await last_record(env)
        assert [c.purpose for c in record.inner] == ["edge", "advisor"] and len(await env.records("s1")) == 1


async def test_sketch_plans_once_from_the_task_alone() -> None:
    async with in_process(route(strategy="sketch")) as env:
        env.cloud.push({"text": "1. run the tests\n2. fix calc.add"})
        system: dict[str, Any] = {"role": "system", "content": "You are an agent."}
        await ask(env, messages=[system, TASK])
        await ask(env, messages=[system, TASK, OK, {"role": "user", "content": "go"}])
        assert len(env.cloud.received) == 1
        plan_request = env.cloud.received[0].body["messages"]
        assert len(plan_request) == 1 and "Fix the failing test in calc.py" in plan_request[0]["content"]
        assert "You are an agent." not in plan_request[0]["content"]
        assert len(env.edge.received) == 2
        for received in env.edge.received:
            assert received.body["messages"][0]["content"].startswith("You are an agent.")
            assert "2. fix calc.add" in received.body["messages"][0]["content"]


@pytest.mark.parametrize("arguments", ['{"command": ', '{"cmd": "ls"}', '{"command": 5}'])
async def test_invalid_edge_tool_calls_are_redone_by_the_cloud(arguments: str) -> None:
    async with in_process(route(strategy="escalation")) as env:
        env.edge.push({"kind": "tool_call", "name": "bash", "arguments": arguments})
        result = await ask(env)
        assert decided(result) == ("cloud", "invalid_tool_call") and len(env.cloud.received) == 1
        assert message(result)["content"] == "cloud-model says hi"
        assert (await last_record(env)).inner[0].status.startswith("invalid")


def turn(i: int, output: str, command: str = "pytest") -> list[dict[str, Any]]:
    arguments = orjson.dumps({"command": f"{command} {i}"}).decode()
    call = {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": arguments}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{i}", "content": output},
    ]


async def test_escalation_keeps_valid_edge_steps_and_escalates_failing_runs() -> None:
    async with in_process(route(strategy="escalation", errors_in_a_row=2)) as env:
        env.edge.push({"kind": "tool_call", "name": "bash", "arguments": '{"command": "ls"}'})
        assert decided(await ask(env)) == ("edge", "edge_answered") and not env.cloud.received
        env.edge.push({"kind": "tool_call", "name": "launch_rockets", "arguments": "{}"})
        assert (await ask(env, "t2")).facts.reason == "invalid_tool_call"
        errors = [TASK, *turn(1, "Traceback (most recent call last):\nValueError"), *turn(2, "2 failed, 1 passed")]
        before = len(env.edge.received)
        assert decided(await ask(env, "t3", errors)) == ("cloud", "failing")
        assert len(env.edge.received) == before  # the edge was not even asked
        repeated = [TASK, *turn(1, "ok", "cat x"), *turn(1, "ok", "cat x")]
        assert (await ask(env, "t4", repeated)).facts.reason == "failing"


def judge_steps(n: int) -> list[list[dict[str, Any]]]:
    """Growing histories of a run that edits files and hits failing tests (as tests/test_judge_strategy.py)."""
    messages: list[dict[str, Any]] = [TASK]
    out = [list(messages)]
    for i in range(n - 1):
        command = ["cat calc.py", "pytest -q", "sed -i 's/-/+/' calc.py", "pytest -q"][i % 4]
        output = ["def add(a, b):\n    return a - b", "1 failed, 2 passed\nAssertionError", "", "3 passed"][i % 4]
        arguments = orjson.dumps({"command": command}).decode()
        call = {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": arguments}}
        messages = [
            *messages,
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": output},
        ]
        out.append(list(messages))
    return out


async def test_the_shipped_judge_decides_by_score_against_the_threshold() -> None:
    async with in_process(route(strategy="judge", threshold=0.4)) as env:
        results = [await ask(env, "j", history) for history in judge_steps(8)]
        for result in results:
            assert result.facts.reason == "judge" and result.facts.score is not None
            assert 0 <= result.facts.score <= 1
            assert result.facts.target == ("cloud" if result.facts.score >= 0.4 else "edge")
        assert len({r.facts.score for r in results}) > 1  # the state moves the score
        assert len(env.cloud.received) == sum(r.facts.target == "cloud" for r in results)
        assert not any(r.inner for r in await env.records("j"))  # the judge runs in process
        assert env.metric("tandem_judge_latency_seconds_count") == 8
