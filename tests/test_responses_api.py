"""OpenAI Responses (`/v1/responses`, what Codex CLI speaks) through the gateway, with the real
openai SDK: plain and streamed text, function calls and their outputs, errors."""

from __future__ import annotations

from collections.abc import Callable

import openai
import pytest

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

TOOLS = [
    {
        "type": "function",
        "name": "shell",
        "description": "run a command",
        "strict": True,
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
            "additionalProperties": False,
        },
    },
    {"type": "web_search"},
]


def sdk(server: GatewayServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)


def test_plain_text_with_instructions(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"text": "hello from the edge", "prompt_tokens": 30, "cached_tokens": 10, "completion_tokens": 4})
    raw = sdk(gateway).responses.with_raw_response.create(
        model="tandem", instructions="be brief", input="hi", max_output_tokens=64
    )
    response = raw.parse()
    assert response.output_text == "hello from the edge" and response.status == "completed"
    assert response.usage is not None and (response.usage.input_tokens, response.usage.output_tokens) == (30, 4)
    assert response.usage.input_tokens_details.cached_tokens == 10
    assert raw.headers["x-tandem-target"] == "edge"
    sent = edge.received[0].body
    assert sent["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert sent["max_completion_tokens"] == 64 and "max_tokens" not in sent


def test_function_call_and_its_output(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"kind": "tool_call", "name": "shell", "arguments": '{"command": "ls"}'}, {"text": "two files"})
    client = sdk(gateway)
    first = client.responses.create(model="tandem", input="list files", tools=TOOLS)  # type: ignore[arg-type]
    call = first.output[0]
    assert call.type == "function_call" and call.name == "shell" and call.arguments == '{"command": "ls"}'
    assert [t["function"]["name"] for t in edge.received[0].body["tools"]] == ["shell"]  # web_search is not passed on
    second = client.responses.create(
        model="tandem",
        tools=TOOLS,
        input=[  # type: ignore[arg-type]
            {"role": "user", "content": "list files"},
            {"type": "function_call", "call_id": call.call_id, "name": "shell", "arguments": call.arguments},
            {"type": "function_call_output", "call_id": call.call_id, "output": "a.py b.py"},
        ],
    )
    assert second.output_text == "two files"
    sent = edge.received[1].body["messages"]
    assert sent[1]["tool_calls"][0]["id"] == call.call_id
    assert sent[2] == {"role": "tool", "tool_call_id": call.call_id, "content": "a.py b.py"}


def test_streamed_text_and_function_call(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push({"text": "one two three"}, {"kind": "tool_call", "name": "shell", "arguments": '{"command": "pytest"}'})
    client = sdk(gateway)
    events = list(client.responses.create(model="tandem", input="go", stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "one two three"
    assert events[-1].response.output_text == "one two three"  # type: ignore[union-attr]
    assert events[-1].response.usage is not None  # type: ignore[union-attr]
    with client.responses.stream(model="tandem", input="test", tools=TOOLS) as stream:  # type: ignore[arg-type]
        final = stream.get_final_response()
    item = final.output[0]
    assert item.type == "function_call" and item.arguments == '{"command": "pytest"}'


def test_errors(gateway: GatewayServer, edge: FakeUpstream) -> None:
    with pytest.raises(openai.NotFoundError, match="tandem/edge"):
        sdk(gateway).responses.create(model="gpt-x", input="hi")
    with pytest.raises(openai.BadRequestError, match="'input' is required"):
        sdk(gateway).responses.create(model="tandem")  # type: ignore[call-overload]
    edge.push({"kind": "drop", "after": 2, "text": "a b c d"})
    events = list(sdk(gateway).responses.create(model="tandem", input="go", stream=True))
    assert events[-1].type == "response.failed"


def test_a_streamed_answer_a_strategy_prepared_is_streamed_as_response_events(
    make_gateway: Callable[..., GatewayServer], edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "self_delegation"}})
    edge.push({"text": "done here"})
    events = list(sdk(server).responses.create(model="tandem", input="hi", stream=True))
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "done here"
    assert not cloud.received


def test_every_answer_has_ids_of_its_own_whatever_the_upstream_repeats(
    gateway: GatewayServer, edge: FakeUpstream
) -> None:
    """An upstream may give every completion the same id (this one does): a response's id and its
    message items' ids are the gateway's own, never another answer's, streamed or not (a client
    that tracks the items it has sent by id would take a new answer's for an old one's)."""
    edge.push({"text": "one"}, {"text": "two"}, {"text": "three"})
    client = sdk(gateway)
    whole = [client.responses.create(model="tandem", input="hi") for _ in range(2)]
    with client.responses.stream(model="tandem", input="hi") as stream:
        streamed = stream.get_final_response()
    answers = [*whole, streamed]
    assert len({answer.id for answer in answers}) == 3
    items = [answer.output[0].id for answer in answers]
    assert len(set(items)) == 3 and all(item.startswith("msg_") for item in items), items
    assert items == [f"msg_{answer.id.removeprefix('resp_')}" for answer in answers]
