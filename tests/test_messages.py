"""Anthropic Messages (`/v1/messages`, what Claude Code speaks) through the gateway, with the
real anthropic SDK: plain and streamed text, tool use, tool results, errors."""

from __future__ import annotations

import json
from collections.abc import Callable

import anthropic
import httpx
import pytest

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

MakeGateway = Callable[..., GatewayServer]
TOOLS = [
    {
        "name": "bash",
        "description": "run a command",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    }
]


def sdk(server: GatewayServer, key: str = "unused") -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url, api_key=key, max_retries=0)


def test_plain_text(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"text": "hello from the edge", "prompt_tokens": 30, "cached_tokens": 10, "completion_tokens": 4})
    raw = sdk(gateway).messages.with_raw_response.create(
        model="tandem", max_tokens=64, system="be brief", messages=[{"role": "user", "content": "hi"}]
    )
    message = raw.parse()
    assert message.content[0].type == "text" and message.content[0].text == "hello from the edge"
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (20, 4)
    assert raw.headers["x-tandem-target"] == "edge"
    sent = edge.received[0].body
    assert sent["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert sent["max_completion_tokens"] == 64 and "max_tokens" not in sent


def test_tool_use_and_tool_result_round_trip(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"kind": "tool_call", "name": "bash", "arguments": '{"command": "ls"}'}, {"text": "done"})
    client = sdk(gateway)
    first = client.messages.create(
        model="tandem",
        max_tokens=64,
        tools=TOOLS,
        tool_choice={"type": "any"},
        messages=[{"role": "user", "content": "list"}],
    )
    use = first.content[0]
    assert use.type == "tool_use" and use.name == "bash" and use.input == {"command": "ls"}
    assert first.stop_reason == "tool_use"
    assert edge.received[0].body["tools"][0]["function"]["parameters"]["required"] == ["command"]
    assert edge.received[0].body["tool_choice"] == "required"
    client.messages.create(
        model="tandem",
        max_tokens=64,
        tools=TOOLS,
        messages=[
            {"role": "user", "content": "list"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": use.id, "name": "bash", "input": {"command": "ls"}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "a.py b.py"}]},
        ],
    )
    sent = edge.received[1].body["messages"]
    assert sent[1]["tool_calls"][0]["function"] == {"name": "bash", "arguments": '{"command":"ls"}'}
    assert sent[2] == {"role": "tool", "tool_call_id": use.id, "content": "a.py b.py"}


def test_streamed_text_and_tool_use(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"text": "one two three"}, {"kind": "tool_call", "name": "bash", "arguments": '{"command": "pytest -q"}'})
    client = sdk(gateway)
    with client.messages.stream(model="tandem", max_tokens=64, messages=[{"role": "user", "content": "go"}]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "one two three" and final.stop_reason == "end_turn"
    with client.messages.stream(
        model="tandem",
        max_tokens=64,
        tools=TOOLS,
        messages=[{"role": "user", "content": "test"}],
    ) as stream:
        final = stream.get_final_message()
    assert final.content[0].type == "tool_use" and final.content[0].input == {"command": "pytest -q"}
    assert final.stop_reason == "tool_use"


def test_errors_are_anthropic_shaped(gateway: GatewayServer) -> None:
    client = sdk(gateway)
    with pytest.raises(anthropic.NotFoundError, match="tandem/edge"):
        client.messages.create(model="claude-x", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    with httpx.Client() as http:
        response = http.post(
            f"{gateway.url}/v1/messages", json={"model": "tandem", "messages": [{"role": "user", "content": "x"}]}
        )
    assert response.status_code == 400
    assert response.json() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "'max_tokens' is required and must be an integer"},
    }


def test_x_api_key_and_count_tokens(make_gateway: MakeGateway) -> None:
    server = make_gateway(client_api_keys=["sk-claude"])
    with pytest.raises(anthropic.AuthenticationError):
        sdk(server, "wrong").messages.create(model="tandem", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    assert (
        sdk(server, "sk-claude")
        .messages.create(model="tandem", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
        .content[0]
        .text
    )
    counted = sdk(server, "sk-claude").messages.count_tokens(
        model="tandem", messages=[{"role": "user", "content": "hi " * 40}]
    )
    assert counted.input_tokens > 10


def test_a_mid_stream_failure_ends_with_an_error_event(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"kind": "drop", "after": 2, "text": "a b c d"})
    with httpx.Client() as http:
        response = http.post(
            f"{gateway.url}/v1/messages",
            json={"model": "tandem", "max_tokens": 8, "stream": True, "messages": [{"role": "user", "content": "hi"}]},
        )
    events = [line[len("event: ") :] for line in response.text.splitlines() if line.startswith("event: ")]
    assert events[0] == "message_start" and events[-1] == "error" and "message_stop" not in events
    with pytest.raises(anthropic.APIStatusError):
        edge.push({"kind": "drop", "after": 2, "text": "a b c d"})
        with sdk(gateway).messages.stream(
            model="tandem", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
        ) as s:
            s.get_final_message()


def test_a_streamed_answer_a_strategy_prepared_is_streamed_as_messages_events(
    make_gateway: MakeGateway, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    # Self-delegation: the edge answered itself, so the step's answer is the inner call's,
    # prepared by the engine as a stream of chat chunks, then translated like any other stream.
    server = make_gateway(routes={"tandem": {"strategy": "self_delegation"}})
    edge.push({"text": "I can do this myself"})
    with sdk(server).messages.stream(
        model="tandem", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "I can do this myself" and final.stop_reason == "end_turn"
    assert not cloud.received and len(edge.received) == 1


def test_an_answer_without_usable_usage_reports_the_ledgers_estimate_not_zero(
    gateway: GatewayServer, edge: FakeUpstream
) -> None:
    """An upstream whose usage is missing or broken: the client is told the tokens the ledger
    charged (an estimate), on /v1/messages and /v1/responses alike; Claude Code sizes its
    context by the usage it reads."""
    completion = {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "done " * 40}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": "many", "completion_tokens": -1},
    }
    prompt = "summarise the build log " * 50
    for surface in ("messages", "responses"):
        edge.push({"kind": "raw", "body": json.dumps(completion), "content_type": "application/json"})
        session = f"usage-{surface}"
        if surface == "messages":
            raw = httpx.post(
                f"{gateway.url}/v1/messages",
                json={"model": "tandem", "max_tokens": 64, "messages": [{"role": "user", "content": prompt}]},
                headers={"x-session-id": session},
                timeout=10,
            )
            told = (raw.json()["usage"]["input_tokens"], raw.json()["usage"]["output_tokens"])
        else:
            raw = httpx.post(
                f"{gateway.url}/v1/responses",
                json={"model": "tandem", "input": prompt},
                headers={"x-session-id": session},
                timeout=10,
            )
            told = (raw.json()["usage"]["input_tokens"], raw.json()["usage"]["output_tokens"])
        assert raw.status_code == 200, raw.text
        (record,) = httpx.get(f"{gateway.url}/v1/trajectories/{session}", timeout=10).json()["records"]
        assert record["usage_estimated"] is True
        charged = record["usage"]
        assert told == (charged["prompt_tokens"], charged["completion_tokens"])
        assert told[0] > 100 and told[1] > 10  # the estimate, not zero


def test_each_answer_has_an_id_of_its_own_whatever_the_upstream_says(
    gateway: GatewayServer, edge: FakeUpstream
) -> None:
    """Claude Code joins consecutive assistant messages of one id into one turn: an upstream that
    repeats its completion id (this fake always does) or gives none must not make two answers one."""
    no_id = {
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "second"}, "finish_reason": "stop"}],
    }
    edge.push({"text": "first"}, {"kind": "raw", "body": json.dumps(no_id), "content_type": "application/json"})
    edge.push({"text": "streamed"})
    client = sdk(gateway)
    asked = [{"role": "user", "content": "hello"}]
    ids = [client.messages.create(model="tandem", max_tokens=16, messages=asked).id for _ in range(2)]
    with client.messages.stream(model="tandem", max_tokens=16, messages=asked) as stream:
        ids.append(stream.get_final_message().id)
    assert len(set(ids)) == 3 and all(i.startswith("msg_") for i in ids), ids
