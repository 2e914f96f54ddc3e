"""Parallel tool calls whose deltas an upstream interleaves (call 0 starts, call 1 starts, then
more of call 0's arguments), streamed on the translated surfaces: each call stays one block
(Messages) or one output item (Responses) with its own id, name and whole arguments, as the
real `anthropic` and `openai` SDKs' stream accumulators read them. Against a real gateway and a
raw upstream that writes the chat stream the test chooses."""

from __future__ import annotations

from collections.abc import Callable

import anthropic
import openai
import orjson
import pytest
from aiohttp import web

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer
from tests.raw_upstream import RawUpstream, stream_bytes
from tests.test_answer_limits import raw_upstream

__all__ = ["raw_upstream"]  # the fixture, shared with the answer-limit tests

EDGE_ONLY = {"tandem": {"strategy": "edge", "failover": False}}
USAGE = {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}


def _chunk(delta: dict[str, object] | None, finish: str | None = None, usage: bool = False) -> bytes:
    chunk: dict[str, object] = {"id": "chatcmpl-par", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    chunk["choices"] = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    if usage:
        chunk["usage"] = USAGE
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def _call(index: int, arguments: str, call_id: str | None = None, name: str | None = None) -> dict[str, object]:
    call: dict[str, object] = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        call.update(id=call_id, type="function")
        call["function"] = {"name": name, "arguments": arguments}
    return {"tool_calls": [call]}


# Text, then two calls whose argument deltas alternate.
INTERLEAVED = [
    _chunk({"role": "assistant", "content": ""}),
    _chunk({"content": "Doing two things."}),
    _chunk(_call(0, "", "call_a", "bash")),
    _chunk(_call(0, '{"command": ')),
    _chunk(_call(1, '{"path"', "call_b", "read")),
    _chunk(_call(0, '"ls"}')),
    _chunk(_call(1, ': "a"}')),
    _chunk({}, "tool_calls"),
    _chunk(None, usage=True),
    b"data: [DONE]\n\n",
]
# The same calls one after the other, as OpenAI and vLLM send them.
SEQUENTIAL = [
    _chunk({"role": "assistant", "content": ""}),
    _chunk(_call(0, '{"command": ', "call_a", "bash")),
    _chunk(_call(0, '"ls"}')),
    _chunk(_call(1, '{"path"', "call_b", "read")),
    _chunk(_call(1, ': "a"}')),
    _chunk({}, "tool_calls"),
    _chunk(None, usage=True),
    b"data: [DONE]\n\n",
]
STREAMS = {"interleaved": INTERLEAVED, "sequential": SEQUENTIAL}
EXPECTED = [("call_a", "bash", {"command": "ls"}), ("call_b", "read", {"path": "a"})]


@pytest.fixture()
def streamed(
    make_gateway: Callable[..., GatewayServer], raw_upstream: Callable[..., RawUpstream], request: pytest.FixtureRequest
) -> GatewayServer:
    parts: list[bytes] = STREAMS[request.param]

    async def answer(incoming: web.Request) -> web.StreamResponse:
        await incoming.read()
        return await stream_bytes(incoming, parts)

    upstream = raw_upstream({("POST", "/v1/chat/completions"): answer})
    return make_gateway(edge_url=upstream.base_url, cloud_url=upstream.base_url, routes=EDGE_ONLY)


@pytest.mark.parametrize("streamed", list(STREAMS), indirect=True)
def test_messages_stream_keeps_each_parallel_call_whole(streamed: GatewayServer, edge: FakeUpstream) -> None:
    client = anthropic.Anthropic(base_url=streamed.url, api_key="k", max_retries=0, timeout=20)
    tools = [
        {"name": "bash", "description": "run", "input_schema": {"type": "object"}},
        {"name": "read", "description": "read", "input_schema": {"type": "object"}},
    ]
    with client.messages.stream(
        model="tandem", max_tokens=100, messages=[{"role": "user", "content": "hi"}], tools=tools
    ) as stream:
        events = list(stream)
        message = stream.get_final_message()
    calls = [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]
    assert calls == EXPECTED
    assert message.stop_reason == "tool_use"
    # One block open at a time: each block's start comes after the previous block's stop.
    opened: list[int] = []
    for event in events:
        if event.type == "content_block_start":
            assert len(opened) == len([e for e in events[: events.index(event)] if e.type == "content_block_stop"])
            opened.append(event.index)
    assert opened == list(range(len(message.content)))


@pytest.mark.parametrize("streamed", list(STREAMS), indirect=True)
def test_responses_stream_keeps_each_parallel_call_whole(streamed: GatewayServer, edge: FakeUpstream) -> None:
    client = openai.OpenAI(base_url=streamed.base_url, api_key="k", max_retries=0, timeout=20)
    tools = [
        {"type": "function", "name": "bash", "parameters": {"type": "object"}, "strict": False},
        {"type": "function", "name": "read", "parameters": {"type": "object"}, "strict": False},
    ]
    with client.responses.stream(model="tandem", input="hi", tools=tools) as stream:  # type: ignore[arg-type]
        events = list(stream)
        response = stream.get_final_response()
    calls = [(i.call_id, i.name, orjson.loads(i.arguments)) for i in response.output if i.type == "function_call"]
    assert calls == EXPECTED
    numbers = [event.sequence_number for event in events]
    assert numbers == list(range(len(events)))
    # Every item added is done before the next is added.
    added = [e.output_index for e in events if e.type == "response.output_item.added"]
    done = [e.output_index for e in events if e.type == "response.output_item.done"]
    assert added == done == list(range(len(response.output)))


# A model's arguments that are no JSON object: broken JSON, and JSON of another kind.
ODD_ARGUMENTS = [("call_a", "bash", '{"command": "ls -la'), ("call_b", "read", "[1, 2]")]
ODD = [
    _chunk({"role": "assistant", "content": ""}),
    _chunk(_call(0, '{"command": "ls', "call_a", "bash")),
    _chunk(_call(0, " -la")),
    _chunk(_call(1, "[1, 2]", "call_b", "read")),
    _chunk({}, "tool_calls"),
    _chunk(None, usage=True),
    b"data: [DONE]\n\n",
]


@pytest.fixture()
def odd(make_gateway: Callable[..., GatewayServer], raw_upstream: Callable[..., RawUpstream]) -> GatewayServer:
    async def answer(incoming: web.Request) -> web.StreamResponse:
        if (await incoming.json()).get("stream"):
            return await stream_bytes(incoming, ODD)
        calls = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in ODD_ARGUMENTS]
        message = {"role": "assistant", "content": None, "tool_calls": calls}
        choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
        body = {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}
        return web.json_response({**body, "usage": USAGE})

    upstream = raw_upstream({("POST", "/v1/chat/completions"): answer})
    return make_gateway(edge_url=upstream.base_url, cloud_url=upstream.base_url, routes=EDGE_ONLY)


def test_arguments_that_are_no_object_reach_a_messages_client_as_the_whole_answer_gives_them(
    odd: GatewayServer, edge: FakeUpstream
) -> None:
    """Streamed or not, a tool call's `input` is an object: the model's text under `_raw` where
    it is none (before, a stream relayed the broken JSON and the SDK raised mid-stream, and a
    whole answer gave JSON of another kind as it was)."""
    client = anthropic.Anthropic(base_url=odd.url, api_key="k", max_retries=0, timeout=20)
    tools = [{"name": "bash", "description": "run", "input_schema": {"type": "object"}}]
    kwargs = {"model": "tandem", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}], "tools": tools}
    expected = [(i, {"_raw": a}) for i, _, a in ODD_ARGUMENTS]
    with client.messages.stream(**kwargs) as stream:  # type: ignore[arg-type]
        message = stream.get_final_message()
    assert [(b.id, b.input) for b in message.content if b.type == "tool_use"] == expected
    whole = client.messages.create(**kwargs)  # type: ignore[arg-type]
    assert [(b.id, b.input) for b in whole.content if b.type == "tool_use"] == expected
