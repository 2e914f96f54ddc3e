"""`/v1/messages`: what a chat answer says beyond its text reaches an Anthropic client, plain and
streamed: reasoning as a thinking block (and back upstream from the history as the assistant
turn's `reasoning_content`), a forced tool call's `tool_use` stop, vLLM's matched stop string as
the `stop_sequence`, a refusal; and the output bound goes upstream as `max_completion_tokens`.
Real gateway, scripted upstream, the real anthropic SDK (its stream helper builds the message)."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx

from router.quota import requested_max_tokens
from router.surfaces.messages.translate import to_chat
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer
from tests.translated_answers import plain, sse_data, sse_types, streamed

TOOLS: Any = [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
WEATHER = [("call_a", "get_weather", '{"city": "Paris"}')]
THOUGHT = "I should call the tool for Paris."


def sdk(server: GatewayServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url, api_key="unused", max_retries=0)


def ask(server: GatewayServer, **extra: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"model": "tandem", "max_tokens": 200, "messages": [{"role": "user", "content": "hi"}]}
    return {**args, **extra}


def both(server: GatewayServer, edge: FakeUpstream, message: dict[str, Any], **script: Any) -> list[Any]:
    """The answer to `message` (a scripted chat answer) plain, then streamed as the SDK's stream
    helper builds it."""
    args = ask(server, **script.pop("request", {}))
    edge.push(plain(message, **script))
    whole = sdk(server).messages.create(**args)
    edge.push(streamed(message, **script))
    with sdk(server).messages.stream(**args) as stream:
        built = stream.get_final_message()
    return [whole, built]


def test_reasoning_is_a_thinking_block_before_the_tool_use(gateway: GatewayServer, edge: FakeUpstream) -> None:
    request = {"tools": TOOLS, "thinking": {"type": "enabled", "budget_tokens": 1024}}
    answers = both(gateway, edge, {"reasoning_content": THOUGHT}, calls=WEATHER, finish="tool_calls", request=request)
    for answer in answers:
        assert [block.type for block in answer.content] == ["thinking", "tool_use"]
        thinking = answer.content[0]
        assert thinking.thinking == THOUGHT and thinking.signature.startswith("tandem:")
        assert answer.content[1].input == {"city": "Paris"} and answer.stop_reason == "tool_use"
    # One text, one signature, whichever way it came (a digest of the text: nothing else in it).
    assert answers[0].content[0].signature == answers[1].content[0].signature
    # `reasoning` (OpenRouter's, newer vLLM's name) reads the same.
    edge.push(plain({"reasoning": THOUGHT, "content": "It is sunny."}))
    answer = sdk(gateway).messages.create(**ask(gateway))
    assert [(b.type, getattr(b, "thinking", getattr(b, "text", None))) for b in answer.content] == [
        ("thinking", THOUGHT),
        ("text", "It is sunny."),
    ]


def test_a_streamed_thinking_block_has_anthropics_events(
    gateway: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    edge.push(streamed({"reasoning_content": THOUGHT, "content": "Sunny."}))
    answer = client.post(f"{gateway.url}/v1/messages", json={**ask(gateway), "stream": True})
    assert sse_types(answer.content) == [
        "message_start",
        "content_block_start",
        *["content_block_delta"] * 7,  # 6 pieces of thinking, then its signature
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    events = sse_data(answer.content)
    assert events[1]["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    assert events[7]["delta"]["type"] == "thinking_delta" and events[8]["delta"]["type"] == "signature_delta"
    assert events[10]["index"] == 1 and events[10]["content_block"]["type"] == "text"


def test_thinking_in_the_history_goes_back_as_reasoning_content(gateway: GatewayServer, edge: FakeUpstream) -> None:
    request = {"tools": TOOLS}
    edge.push(streamed({"reasoning_content": THOUGHT}, calls=WEATHER, finish="tool_calls"))
    with sdk(gateway).messages.stream(**ask(gateway, **request)) as stream:
        answered = stream.get_final_message()
    # The turn as Claude Code sends it back (a redacted block of Anthropic's own beside it).
    turn = [block.model_dump(exclude_none=True) for block in answered.content]
    turn.insert(1, {"type": "redacted_thinking", "data": "EncryptedByAnthropic"})
    result = {"type": "tool_result", "tool_use_id": "call_a", "content": "sunny"}
    history: Any = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": turn},
        {"role": "user", "content": [result]},
    ]
    sdk(gateway).messages.create(model="tandem", max_tokens=50, tools=TOOLS, messages=history)
    sent = edge.received[-1].body["messages"][1]
    assert sent["role"] == "assistant" and sent["reasoning_content"] == THOUGHT
    assert sent["tool_calls"][0]["id"] == "call_a" and "EncryptedByAnthropic" not in str(sent)
    # A turn without thinking sends none.
    history[1]["content"] = turn[2:]
    sdk(gateway).messages.create(model="tandem", max_tokens=50, tools=TOOLS, messages=history)
    assert "reasoning_content" not in edge.received[-1].body["messages"][1]


def test_a_forced_tool_call_stops_with_tool_use(gateway: GatewayServer, edge: FakeUpstream) -> None:
    # OpenAI and vLLM answer a named tool choice with finish_reason "stop".
    request = {"tools": TOOLS, "tool_choice": {"type": "tool", "name": "get_weather"}}
    for answer in both(gateway, edge, {}, calls=WEATHER, finish="stop", request=request):
        assert answer.stop_reason == "tool_use" and [b.type for b in answer.content] == ["tool_use"]
    # Cut short, it says so, calls or not.
    for answer in both(gateway, edge, {}, calls=WEATHER, finish="length", request=request):
        assert answer.stop_reason == "max_tokens"


def test_a_matched_stop_sequence_is_reported(gateway: GatewayServer, edge: FakeUpstream) -> None:
    request = {"stop_sequences": ["END", "STOP"]}
    for answer in both(gateway, edge, {"content": "Done"}, stop_reason="END", request=request):
        assert (answer.stop_reason, answer.stop_sequence) == ("stop_sequence", "END")
    assert edge.received[-1].body["stop"] == ["END", "STOP"]
    # A stop string the request did not ask for (a server's own) is an end of turn.
    for answer in both(gateway, edge, {"content": "Done"}, stop_reason="</s>", request=request):
        assert (answer.stop_reason, answer.stop_sequence) == ("end_turn", None)


def test_a_refusal_stops_with_refusal_and_keeps_its_words(gateway: GatewayServer, edge: FakeUpstream) -> None:
    for answer in both(gateway, edge, {"refusal": "I can't help with that."}):
        assert answer.stop_reason == "refusal"
        assert [(b.type, b.text) for b in answer.content] == [("text", "I can't help with that.")]


def test_the_output_bound_goes_upstream_as_max_completion_tokens(gateway: GatewayServer, edge: FakeUpstream) -> None:
    sdk(gateway).messages.create(**ask(gateway, max_tokens=8000))
    sent = edge.received[-1].body
    assert sent["max_completion_tokens"] == 8000 and "max_tokens" not in sent
    # The quota's hold reads the bound of the translated request.
    assert requested_max_tokens(to_chat(ask(gateway, max_tokens=77))) == 77
