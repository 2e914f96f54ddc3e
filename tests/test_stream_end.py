"""The end of a relayed stream: the upstream's `data: [DONE]` reaches the client once, however
the upstream's reads split it, and the text `[DONE]` inside an answer does not end it. Against a
real gateway and a raw upstream that writes its stream in the pieces a test chooses."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
import orjson
from aiohttp import web

from tests.gateway_server import GatewayServer
from tests.raw_upstream import RawUpstream
from tests.test_answer_limits import raw_upstream

__all__ = ["raw_upstream"]  # the fixture, shared with the answer-limit tests

EDGE_ONLY = {"tandem": {"strategy": "edge", "failover": False}}


def _event(delta: dict[str, object], finish: str | None = None) -> bytes:
    chunk = {
        "id": "chatcmpl-end",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "edge-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


USAGE = b'data: {"id":"chatcmpl-end","object":"chat.completion.chunk","created":0,"model":"edge-model","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}\n\n'
DONE = b"data: [DONE]\n\n"


def _answer(text: str) -> bytes:
    return _event({"role": "assistant", "content": ""}) + _event({"content": text}) + _event({}, "stop") + USAGE


async def _split_stream(request: web.Request) -> web.StreamResponse:
    """The stream in two writes, a pause between them (so two reads at the gateway), cut at the
    body's `split` byte; `text` is the answer's content."""
    body = await request.json()
    whole = _answer(body.get("text", "hello")) + DONE
    split = int(body["split"])
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for part in (whole[:split], whole[split:]):
        if part:
            await response.write(part)
            await asyncio.sleep(0.03)
    await response.write_eof()
    return response


def _ask(client: httpx.Client, server: GatewayServer, split: int, text: str = "hello") -> bytes:
    body = {
        "model": "tandem",
        "stream": True,
        "split": split,
        "text": text,
        "messages": [{"role": "user", "content": "hi"}],
    }
    with client.stream("POST", f"{server.url}/v1/chat/completions", json=body) as response:
        assert response.status_code == 200
        return b"".join(response.iter_bytes())


def _events(body: bytes) -> list[bytes]:
    return [block for block in body.replace(b"\r\n", b"\n").split(b"\n\n") if block]


def test_done_split_at_every_byte_position_is_sent_once(
    make_gateway: Callable[..., GatewayServer], raw_upstream: Callable[..., RawUpstream], client: httpx.Client
) -> None:
    upstream = raw_upstream({("POST", "/v1/chat/completions"): _split_stream})
    server = make_gateway(routes=EDGE_ONLY, edge_url=upstream.base_url)
    answer = _answer("hello")
    # Every cut from just before the last event's blank line to inside [DONE]'s own end.
    for split in range(len(answer) - 2, len(answer) + len(DONE)):
        body = _ask(client, server, split)
        events = _events(body)
        assert body.count(b"[DONE]") == 1, (split, body[-200:])
        assert events[-1] == b"data: [DONE]", (split, body[-200:])
        assert b'"error"' not in body, (split, body[-200:])
        # Everything the upstream said before its end went through, in order, nothing added.
        assert events[:-1] == _events(answer), (split, events)


def test_done_as_text_inside_an_answer_does_not_end_the_stream(
    make_gateway: Callable[..., GatewayServer], raw_upstream: Callable[..., RawUpstream], client: httpx.Client
) -> None:
    upstream = raw_upstream({("POST", "/v1/chat/completions"): _split_stream})
    server = make_gateway(routes=EDGE_ONLY, edge_url=upstream.base_url)
    text = "an SSE stream ends with\ndata: [DONE] and data:[DONE] is the same"
    answer = _answer(text)
    at = answer.index(b"[DONE]")
    for split in (10, at - 3, at + 2, len(answer) // 2):
        body = _ask(client, server, split, text)
        events = _events(body)
        assert events[:-1] == _events(answer), (split, body[-300:])
        assert events[-1] == b"data: [DONE]"


async def _marker_inside_an_event(request: web.Request) -> web.StreamResponse:
    await request.read()
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    await response.write(_event({"role": "assistant", "content": "hi"}, "stop")[:-1] + DONE)
    await response.write_eof()
    return response


def test_a_marker_that_ends_an_open_event_leaves_every_event_whole(
    make_gateway: Callable[..., GatewayServer], raw_upstream: Callable[..., RawUpstream], client: httpx.Client
) -> None:
    """`data: {…}\ndata: [DONE]`: the marker is the event's second line; the event is ended
    before the gateway's usage chunk, which would otherwise join it."""
    upstream = raw_upstream({("POST", "/v1/chat/completions"): _marker_inside_an_event})
    server = make_gateway(routes=EDGE_ONLY, edge_url=upstream.base_url)
    body = _ask(client, server, 0)
    events = _events(body)
    assert events[-1] == b"data: [DONE]" and body.count(b"[DONE]") == 1, body
    for event in events[:-1]:
        assert event.startswith(b"data: {") and event.count(b"data:") == 1, body
        orjson.loads(event[6:])
    assert b'"usage"' in events[-2]
