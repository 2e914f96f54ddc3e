"""`/v1/responses`: what a chat answer says beyond its text reaches an OpenAI Responses client,
plain and streamed: reasoning as a reasoning item with its summary events and its tokens in the
usage (and back upstream from a later request's input as the assistant turn's
`reasoning_content`), a refusal as a refusal part with its events, arguments given as nothing as
`{}`; and the output bound goes upstream as `max_completion_tokens`. Real gateway, scripted
upstream, the real openai SDK (its stream helper builds the response)."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from router.surfaces.responses.request import item_messages, usable
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer
from tests.translated_answers import plain, sse_data, sse_types, streamed

TOOLS: Any = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
WEATHER = [("call_a", "get_weather", '{"city": "Paris"}')]
THOUGHT = "I should call the tool for Paris."


def sdk(server: GatewayServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)


def both(server: GatewayServer, edge: FakeUpstream, message: dict[str, Any], **script: Any) -> list[Any]:
    """The answer to `message` (a scripted chat answer) plain, then streamed as the SDK's stream
    helper builds it."""
    args: dict[str, Any] = {"model": "tandem", "input": "hi", "tools": TOOLS, **script.pop("request", {})}
    edge.push(plain(message, **script))
    whole = sdk(server).responses.create(**args)
    edge.push(streamed(message, **script))
    with sdk(server).responses.stream(**args) as stream:
        built = stream.get_final_response()
    return [whole, built]


def test_reasoning_is_a_reasoning_item_with_its_tokens(gateway: GatewayServer, edge: FakeUpstream) -> None:
    request = {"reasoning": {"effort": "high", "summary": "auto"}}
    for answer in both(gateway, edge, {"reasoning_content": THOUGHT}, calls=WEATHER, request=request):
        assert [item.type for item in answer.output] == ["reasoning", "function_call"]
        reasoning = answer.output[0]
        assert [(part.type, part.text) for part in reasoning.summary] == [("summary_text", THOUGHT)]
        assert reasoning.id.startswith("rs_") and answer.output[1].arguments == '{"city": "Paris"}'
        assert answer.usage.output_tokens_details.reasoning_tokens == 7
    assert edge.received[-1].body["reasoning_effort"] == "high"


def test_a_streamed_reasoning_item_has_openais_events(
    gateway: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    edge.push(streamed({"reasoning_content": "Think.", "content": "Sunny."}))
    answer = client.post(f"{gateway.url}/v1/responses", json={"model": "tandem", "input": "hi", "stream": True})
    assert sse_types(answer.content) == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    events = sse_data(answer.content)
    assert events[3]["summary_index"] == 0 and events[3]["part"] == {"type": "summary_text", "text": ""}
    assert events[5]["text"] == "Think." and events[8]["output_index"] == 1
    assert events[-1]["response"]["usage"]["output_tokens_details"] == {"reasoning_tokens": 7}


def test_a_reasoning_item_goes_back_as_reasoning_content(gateway: GatewayServer, edge: FakeUpstream) -> None:
    edge.push(plain({"reasoning_content": THOUGHT}, calls=WEATHER, finish="tool_calls"))
    first = sdk(gateway).responses.create(model="tandem", input="hi", tools=TOOLS)
    # The output sent back as the SDK gives it, then the call's output.
    history: Any = [
        {"role": "user", "content": "hi"},
        *[item.model_dump(exclude_none=True) for item in first.output],
        {"type": "function_call_output", "call_id": "call_a", "output": "sunny"},
    ]
    sdk(gateway).responses.create(model="tandem", input=history, tools=TOOLS)
    sent = edge.received[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["reasoning_content"] == THOUGHT and sent[1]["content"] is None
    assert sent[1]["tool_calls"][0]["id"] == "call_a"


REASONED = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan."}]}
SAID = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Ok."}]}
CALL = {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "sunny"}
USER = {"type": "message", "role": "user", "content": "go on"}


@pytest.mark.parametrize(
    ("items", "assistant"),
    [
        # Reasoning, then the message it was for: one assistant message.
        ([USER, REASONED, SAID], {"role": "assistant", "content": "Ok.", "reasoning_content": "Plan."}),
        # Reasoning between a turn's text and its call (as gpt-5 interleaves them): still one.
        (
            [USER, SAID, REASONED, CALL, OUTPUT],
            {
                "role": "assistant",
                "content": "Ok.",
                "reasoning_content": "Plan.",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
                ],
            },
        ),
        # Its reasoning text (an open-weight model's) before its summary.
        (
            [USER, {**REASONED, "content": [{"type": "reasoning_text", "text": "Whole."}]}, SAID],
            {"role": "assistant", "content": "Ok.", "reasoning_content": "Whole."},
        ),
        # An encrypted reasoning only: nothing a chat model can read.
        (
            [USER, {"type": "reasoning", "summary": [], "encrypted_content": "x"}, SAID],
            {"role": "assistant", "content": "Ok."},
        ),
        # A reasoning no output followed (a cut history): a turn that said nothing.
        ([USER, REASONED, USER], {"role": "assistant", "content": "", "reasoning_content": "Plan."}),
    ],
)
def test_reasoning_items_join_the_assistant_turn(items: list[Any], assistant: dict[str, Any]) -> None:
    made = item_messages(items, 0)
    messages = [message for one in made for message in one]
    assert [m for m in messages if m["role"] == "assistant"] == [assistant]
    # A body split where `usable` allows it translates the same (the gateway reuses the
    # messages of a history's items it translated before): never inside a reasoning's turn.
    count = 0
    for cut in range(1, len(items)):
        count += len(made[cut - 1])
        if usable(messages, count):
            again = [m for one in item_messages(items[:cut], 0) + item_messages(items[cut:], cut) for m in one]
            assert again == messages, cut


def test_a_refusal_is_a_refusal_part(gateway: GatewayServer, edge: FakeUpstream, client: httpx.Client) -> None:
    refusal = "I can't help with that."
    for answer in both(gateway, edge, {"refusal": refusal}):
        assert answer.status == "completed" and [item.type for item in answer.output] == ["message"]
        assert [part.model_dump() for part in answer.output[0].content] == [{"type": "refusal", "refusal": refusal}]
    edge.push(streamed({"refusal": refusal}))
    answer = client.post(f"{gateway.url}/v1/responses", json={"model": "tandem", "input": "hi", "stream": True})
    types = sse_types(answer.content)
    assert types[2:8] == [
        "response.output_item.added",
        "response.content_part.added",
        "response.refusal.delta",
        "response.refusal.delta",
        "response.refusal.delta",
        "response.refusal.delta",
    ]
    events = sse_data(answer.content)
    done = events[types.index("response.refusal.done")]
    assert done["refusal"] == refusal and done["content_index"] == 0


def test_arguments_given_as_nothing_are_an_empty_object(gateway: GatewayServer, edge: FakeUpstream) -> None:
    tools: Any = [
        {
            "type": "function",
            "name": "list_files",
            "strict": True,
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False, "required": []},
        }
    ]
    calls = [("call_a", "list_files", "")]
    for answer in both(gateway, edge, {}, calls=calls, finish="tool_calls", request={"tools": tools}):
        assert answer.output[0].arguments == "{}"
    # The SDK's parse helper reads the arguments of a strict tool as JSON.
    edge.push(plain({}, calls=calls, finish="tool_calls"))
    parsed = sdk(gateway).responses.parse(model="tandem", input="hi", tools=tools)
    assert parsed.output[0].parsed_arguments == {}  # type: ignore[union-attr]
    edge.push(streamed({}, calls=calls, finish="tool_calls"))
    with sdk(gateway).responses.stream(model="tandem", input="hi", tools=tools) as stream:
        events = list(stream)
    done = [event for event in events if event.type == "response.function_call_arguments.done"]
    added = [event for event in events if event.type == "response.function_call_arguments.delta"]
    assert [event.arguments for event in done] == ["{}"] and "".join(e.delta for e in added) == "{}"  # type: ignore[union-attr]


def test_the_output_bound_goes_upstream_as_max_completion_tokens(gateway: GatewayServer, edge: FakeUpstream) -> None:
    sdk(gateway).responses.create(model="tandem", input="hi", max_output_tokens=4000)
    sent = edge.received[-1].body
    assert sent["max_completion_tokens"] == 4000 and "max_tokens" not in sent
