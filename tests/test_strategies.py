"""Every strategy with scripted upstreams: when the cloud was called, and exactly what it received."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import httpx
import openai
import orjson
import pytest

from router.settings import ConfigError, load_settings
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer
from tests.test_chat import sse_events

MakeGateway = Callable[..., GatewayServer]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
        },
    }
]
TASK = {"role": "user", "content": "Fix the failing test in calc.py"}


def ask(
    client: httpx.Client,
    server: GatewayServer,
    session: str = "s",
    messages: list[dict[str, Any]] | None = None,
    **body: Any,
) -> httpx.Response:
    body = {"model": "tandem", "messages": messages or [TASK], "tools": TOOLS, **body}
    return client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": session})


def record(client: httpx.Client, server: GatewayServer, session: str = "s", index: int = -1) -> dict[str, Any]:
    detail: dict[str, Any] = client.get(f"{server.url}/v1/trajectories/{session}").json()
    result: dict[str, Any] = detail["records"][index]
    return result


def route(make_gateway: MakeGateway, **strategy: Any) -> GatewayServer:
    return make_gateway(routes={"tandem": strategy})


# -- task routing -------------------------------------------------------------------------


def test_task_routing_decides_once_per_run(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = route(make_gateway, strategy="task", cloud_if_matches=r"\brefactor\b")
    hard = [{"role": "user", "content": "Refactor the parser module"}]
    for turn in range(3):
        response = ask(client, server, "hard", hard + [{"role": "assistant", "content": "ok"}] * turn)
        assert response.headers["x-tandem-target"] == "cloud" and response.headers["x-tandem-reason"] == "task_routed"
    for turn in range(2):
        assert (
            ask(client, server, "easy", [TASK] + [{"role": "assistant", "content": "ok"}] * turn).headers[
                "x-tandem-target"
            ]
            == "edge"
        )
    assert len(cloud.received) == 3 and len(edge.received) == 2
    notes = client.get(f"{server.url}/v1/trajectories/hard").json()["notes"]
    # The task strategy's note, and the ledger's prompt-cache prefix (router/ledger.py), each in
    # its owner's namespace (router/notes.py).
    assert notes.keys() == {"strategy:task:target", "ledger:cache_prefix"} and notes["strategy:task:target"] == "cloud"


# -- step routing by entropy ----------------------------------------------------------------


def test_entropy_probe_sends_uncertain_steps_to_the_cloud(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = make_gateway(
        routes={"tandem": {"strategy": "entropy", "threshold": 1.7}},
        upstream_overrides={"edge": {"inner_call_params": {"chat_template_kwargs": {"enable_thinking": False}}}},
    )
    edge.push({"top_logprobs": [math.log(1 / 20)] * 20})  # flat: entropy ln 20 ≈ 3.0
    response = ask(client, server, max_tokens=300)
    assert response.headers["x-tandem-target"] == "cloud" and response.headers["x-tandem-reason"] == "entropy"
    assert float(response.headers["x-tandem-score"]) == pytest.approx(math.log(20), abs=1e-3)
    probe = edge.received[0].body
    assert (probe["max_tokens"], probe["logprobs"], probe["top_logprobs"], probe["stream"]) == (1, True, 20, False)
    assert probe["chat_template_kwargs"] == {"enable_thinking": False}  # the edge's inner_call_params
    assert cloud.received[0].body["max_tokens"] == 300 and "logprobs" not in cloud.received[0].body
    assert [c["purpose"] for c in record(client, server)["inner"]] == ["probe"]

    edge.push({"top_logprobs": [0.0] + [-20.0] * 19}, {"text": "confident"})  # peaked: entropy ≈ 0
    response = ask(client, server, "t2")
    assert (
        response.headers["x-tandem-target"] == "edge"
        and response.json()["choices"][0]["message"]["content"] == "confident"
    )
    assert float(response.headers["x-tandem-score"]) < 0.01


def test_entropy_without_logprobs_takes_the_fallback(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = route(make_gateway, strategy="entropy", fallback="cloud")
    edge.push({"text": "no logprobs here"})
    response = ask(client, server)
    assert response.status_code == 200
    assert response.headers["x-tandem-target"] == "cloud" and response.headers["x-tandem-reason"] == "inner_call_failed"
    assert record(client, server)["inner"][0]["status"] == "no_logprobs"


# -- LLM judge ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "target", "reason"),
    [
        ("YES", "cloud", "llm_judge"),
        ("No, the edge can do this.", "edge", "llm_judge"),
        ("I am not sure", "cloud", "inner_call_failed"),
    ],
)
def test_llm_judge_binary(
    make_gateway: MakeGateway,
    client: httpx.Client,
    edge: FakeUpstream,
    cloud: FakeUpstream,
    reply: str,
    target: str,
    reason: str,
) -> None:
    server = route(make_gateway, strategy="llm_judge", judge="edge", mode="binary", sees="task")
    edge.push({"text": reply})
    response = ask(client, server)
    assert (response.headers["x-tandem-target"], response.headers["x-tandem-reason"]) == (target, reason)
    judged = edge.received[0].body["messages"]
    assert len(judged) == 1 and "Fix the failing test in calc.py" in judged[0]["content"]
    assert len(cloud.received) == (1 if target == "cloud" else 0)


def test_llm_judge_score_on_a_third_upstream(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = make_gateway(
        routes={"tandem": {"strategy": "llm_judge", "judge": "referee", "mode": "score", "threshold": 0.6}},
        upstream_overrides={"referee": {"base_url": cloud.base_url, "model": "referee-model"}},
    )
    cloud.push({"text": "0.8"}, {"text": "cloud answer"})
    response = ask(client, server)
    assert response.headers["x-tandem-target"] == "cloud" and response.headers["x-tandem-score"] == "0.8"
    assert [r.body["model"] for r in cloud.received] == ["referee-model", "cloud-model"]
    cloud.push({"text": "40%"})
    assert ask(client, server, "t2").headers["x-tandem-target"] == "edge"


# -- draft and verify --------------------------------------------------------------------------


def test_draft_accepted_is_relayed_and_rejected_is_regenerated(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = route(make_gateway, strategy="draft_verify", verifier="edge", threshold=0.5)
    edge.push({"kind": "tool_call", "arguments": '{"command": "pytest"}'}, {"text": "0.9"})
    response = ask(client, server)
    assert response.headers["x-tandem-reason"] == "draft_accepted" and not cloud.received
    assert response.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"command": "pytest"}'
    assert "pytest" in edge.received[1].body["messages"][0]["content"]  # the verifier saw the draft

    edge.push({"kind": "tool_call", "arguments": '{"command": "rm -rf /"}'}, {"text": "0.05"})
    response = ask(client, server, "t2")
    assert response.headers["x-tandem-target"] == "cloud" and response.headers["x-tandem-reason"] == "draft_rejected"
    assert cloud.received[0].body["messages"] == [TASK]
    step = record(client, server, "t2")
    assert [c["purpose"] for c in step["inner"]] == ["draft", "verify"]
    assert step["cost_usd"] > 0 and all(c["cost_usd"] > 0 for c in step["inner"])


def test_prepared_answers_stream_as_sse(make_gateway: MakeGateway, edge: FakeUpstream) -> None:
    server = route(make_gateway, strategy="draft_verify")
    edge.push({"kind": "tool_call", "arguments": '{"command": "ls"}', "completion_tokens": 9}, {"text": "1"})
    sdk = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    with sdk.chat.completions.stream(model="tandem", messages=[TASK], tools=TOOLS) as stream:  # type: ignore[arg-type]
        final = stream.get_final_completion()
    assert final.choices[0].message.tool_calls[0].function.arguments == '{"command": "ls"}'  # type: ignore[index]
    assert final.usage is not None and final.usage.completion_tokens == 9


# -- self-delegation ----------------------------------------------------------------------------


def test_self_delegation(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = route(make_gateway, strategy="self_delegation", marker="[[CLOUD]]")
    edge.push({"kind": "tool_call", "name": "delegate_to_cloud", "arguments": "{}"})
    response = ask(client, server)
    assert response.headers["x-tandem-reason"] == "self_delegated" and response.headers["x-tandem-target"] == "cloud"
    assert [t["function"]["name"] for t in edge.received[0].body["tools"]] == ["bash", "delegate_to_cloud"]
    assert cloud.received[0].body["tools"] == TOOLS  # the cloud (and so the agent) never sees the extra tool

    edge.push({"text": "this is hard [[CLOUD]]"})
    assert ask(client, server, "t2").headers["x-tandem-reason"] == "self_delegated"

    edge.push({"kind": "tool_call", "name": "bash", "arguments": '{"command": "ls"}'})
    response = ask(client, server, "t3")
    assert response.headers["x-tandem-reason"] == "edge_answered" and len(cloud.received) == 2
    assert response.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "bash"


# -- advisor ------------------------------------------------------------------------------------


def test_advisor_round_trip_is_one_agent_step(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = route(make_gateway, strategy="advisor", max_words=100)
    edge.push(
        {"kind": "tool_call", "name": "advisor", "arguments": "{}"},
        {"kind": "tool_call", "name": "bash", "arguments": '{"command": "pytest -x"}'},
    )
    cloud.push({"text": "Run the failing test alone first."})
    history = [
        TASK,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c0", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "content": "calc.py test_calc.py"},
    ]
    response = ask(client, server, messages=history)
    assert response.headers["x-tandem-reason"] == "advised" and response.headers["x-tandem-step"] == "1"
    assert (
        response.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"command": "pytest -x"}'
    )
    advice_prompt = cloud.received[0].body["messages"][0]["content"]
    assert "Fix the failing test in calc.py" in advice_prompt and "calc.py test_calc.py" in advice_prompt
    final = edge.received[1].body
    assert [t["function"]["name"] for t in final["tools"]] == ["bash"]
    assert final["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "Run the failing test alone first.",
    }
    assert [c["purpose"] for c in record(client, server)["inner"]] == ["edge", "advisor"]


# -- sketch ---------------------------------------------------------------------------------------


def test_sketch_plans_once_from_the_task_alone(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = route(make_gateway, strategy="sketch")
    cloud.push({"text": "1. run the tests\n2. fix calc.add"})
    system = {"role": "system", "content": "You are an agent."}
    ask(client, server, messages=[system, TASK])
    ask(
        client,
        server,
        messages=[system, TASK, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "go"}],
    )
    assert len(cloud.received) == 1
    plan_request = cloud.received[0].body["messages"]
    assert len(plan_request) == 1 and "Fix the failing test in calc.py" in plan_request[0]["content"]
    assert "You are an agent." not in plan_request[0]["content"]
    for received in edge.received:
        assert received.body["messages"][0]["content"].startswith("You are an agent.")
        assert "2. fix calc.add" in received.body["messages"][0]["content"]


# -- escalation -------------------------------------------------------------------------------------


@pytest.mark.parametrize("arguments", ['{"command": ', '{"cmd": "ls"}', '{"command": 5}'])
def test_invalid_edge_tool_calls_are_redone_by_the_cloud(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream, arguments: str
) -> None:
    server = route(make_gateway, strategy="escalation")
    edge.push({"kind": "tool_call", "name": "bash", "arguments": arguments})
    response = ask(client, server)
    assert response.headers["x-tandem-reason"] == "invalid_tool_call" and len(cloud.received) == 1
    assert record(client, server)["inner"][0]["status"].startswith("invalid")


def test_escalation_keeps_valid_edge_steps_and_escalates_failing_runs(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = route(make_gateway, strategy="escalation", errors_in_a_row=2)
    edge.push({"kind": "tool_call", "name": "bash", "arguments": '{"command": "ls"}'})
    assert ask(client, server).headers["x-tandem-reason"] == "edge_answered"
    unknown = {"kind": "tool_call", "name": "launch_rockets", "arguments": "{}"}
    edge.push(unknown)
    assert ask(client, server, "t2").headers["x-tandem-reason"] == "invalid_tool_call"

    def turn(i: int, output: str, command: str = "pytest") -> list[dict[str, Any]]:
        return [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "bash", "arguments": orjson.dumps({"command": f"{command} {i}"}).decode()},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": output},
        ]

    errors = [TASK, *turn(1, "Traceback (most recent call last):\nValueError"), *turn(2, "2 failed, 1 passed")]
    before = len(edge.received)
    assert ask(client, server, "t3", errors).headers["x-tandem-reason"] == "failing"
    assert len(edge.received) == before  # the edge was not even asked
    repeated = [TASK, *turn(1, "ok", "cat x"), *turn(1, "ok", "cat x")]
    assert ask(client, server, "t4", repeated).headers["x-tandem-reason"] == "failing"


# -- constraints ---------------------------------------------------------------------------------------


def test_budget_in_calls_sends_the_rest_to_the_edge(make_gateway: MakeGateway, client: httpx.Client) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "constraints": {"budget_calls": 2}}})
    targets = [ask(client, server, messages=[TASK] + [{"role": "assistant", "content": "x"}] * i) for i in range(4)]
    assert [(r.headers["x-tandem-target"], r.headers["x-tandem-reason"]) for r in targets] == [
        ("cloud", "route_fixed"),
        ("cloud", "route_fixed"),
        ("edge", "budget_exhausted"),
        ("edge", "budget_exhausted"),
    ]


def test_budget_in_dollars_counts_inner_calls(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    # 20 prompt + 5 completion tokens at 2.5 / 15 $ per M: $0.000125 a cloud call.
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "constraints": {"budget_usd": 0.0002}}})
    first = ask(client, server)
    second = ask(client, server, messages=[TASK, {"role": "assistant", "content": "x"}])
    assert first.headers["x-tandem-target"] == "cloud" and second.headers["x-tandem-target"] == "cloud"
    third = ask(client, server, messages=[TASK, {"role": "assistant", "content": "x"}] * 2)
    assert third.headers["x-tandem-reason"] == "budget_exhausted"


def test_max_share_and_min_gap(make_gateway: MakeGateway, client: httpx.Client) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "constraints": {"max_cloud_share": 0.5}}})
    shares = [
        ask(client, server, messages=[TASK] + [{"role": "assistant", "content": "x"}] * i).headers["x-tandem-target"]
        for i in range(6)
    ]
    assert shares == ["edge", "cloud", "edge", "cloud", "edge", "cloud"]
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "constraints": {"min_cloud_gap": 2}}})
    gaps = [
        ask(client, server, "g", [TASK] + [{"role": "assistant", "content": "x"}] * i).headers["x-tandem-target"]
        for i in range(6)
    ]
    assert gaps == ["cloud", "edge", "edge", "cloud", "edge", "edge"]


def test_pinned_trajectory_stays_on_the_edge_even_when_it_is_down(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud"}})
    ask(client, server, "pinned")
    server.run(server.gateway.tracker.store.note("pinned", "pin", "edge"))
    response = ask(client, server, "pinned", [TASK, {"role": "assistant", "content": "x"}])
    assert response.headers["x-tandem-target"] == "edge" and response.headers["x-tandem-reason"] == "pinned_edge"
    edge.push({"kind": "error", "status": 503})
    response = ask(client, server, "pinned", [TASK, {"role": "assistant", "content": "x"}] * 2)
    assert response.status_code == 503 and len(cloud.received) == 1  # no failover to the cloud


# -- context for cloud steps ------------------------------------------------------------------------------


def history(steps: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}, TASK]
    for i in range(steps):
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "bash", "arguments": f'{{"command": "step {i}"}}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"output {i}"},
        ]
    return messages


def test_context_last_k(make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "context": {"mode": "last_k", "k": 2}}})
    ask(client, server, messages=history(5))
    sent = cloud.received[0].body
    assert sent["messages"][:2] == history(0)
    assert [m.get("content") for m in sent["messages"][2:] if m["role"] == "tool"] == ["output 3", "output 4"]
    assert sent["tools"] == TOOLS


def test_context_flattened(make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "context": {"mode": "flattened"}}})
    ask(client, server, messages=history(3))
    sent = cloud.received[0].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert "output 2" in sent[1]["content"] and "step 0" in sent[1]["content"]


def test_context_summary_is_written_by_the_edge_and_cached(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "context": {"mode": "summary", "k": 2}}})
    edge.push({"text": "Ran steps 0-2; tests fail in calc.add."})
    ask(client, server, messages=history(5))
    ask(client, server, messages=history(6))
    assert len(edge.received) == 1  # one summary, reused
    sent = cloud.received[1].body["messages"]
    assert "Ran steps 0-2" in sent[2]["content"]
    assert [m.get("content") for m in sent if m["role"] == "tool"] == ["output 4", "output 5"]


# -- configuration ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("route_settings", "words"),
    [
        ({"strategy": "telepathy"}, ["routes.tandem", "telepathy"]),
        ({"strategy": "entropy", "threshold": -1}, ["routes.tandem.entropy.threshold"]),
        ({"strategy": "cloud", "constraints": {"budget_usd": -1}}, ["routes.tandem.cloud.constraints.budget_usd"]),
        ({"strategy": "llm_judge", "judge": "oracle"}, ["routes.tandem", "oracle"]),
        ({"strategy": "task", "cloud_if_matches": "(["}, ["routes.tandem.task.cloud_if_matches", "regular expression"]),
        ({"strategy": "random", "probability": 0.3}, ["routes.tandem.random.probability"]),
    ],
)
def test_misconfigured_strategies_name_the_route_and_key(route_settings: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings(routes={"tandem": route_settings})
    for word in words:
        assert word in str(raised.value)


def test_inner_call_failure_falls_back_and_is_recorded(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = route(make_gateway, strategy="self_delegation")
    edge.push({"kind": "error", "status": 500})
    response = ask(client, server, stream=True)
    assert response.status_code == 200 and sse_events(response.text)[-1] == "[DONE]"
    assert response.headers["x-tandem-reason"] == "inner_call_failed" and response.headers["x-tandem-target"] == "cloud"
    assert record(client, server)["inner"][0]["status"] == "error"


def test_flattened_transcripts_keep_every_call_and_mark_cuts() -> None:
    from router.context import flatten

    long_text = {"role": "assistant", "content": "x" * 5000, "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}]}
    assert "[calls run_tests({})]" in flatten([long_text], 20_000)
    big = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "2", "type": "function", "function": {"name": "write_file", "arguments": "y" * 6000}}]}
    flat = flatten([big], 20_000)
    assert "more chars)" in flat and flat.endswith(")]")
