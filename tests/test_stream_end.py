"""The end of a relayed stream: the upstream's `data: [DONE]` reaches the client once, however
the upstream's reads split it, and the text `[DONE]` inside an answer does not end it. Against a
real gateway and a raw upstream that writes its stream in the pieces a test chooses."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest
from aiohttp import web

from tests.fake_upstream import FakeUpstream
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


def _streamed(client: httpx.Client, server: GatewayServer, surface: str, session: str) -> httpx.Response:
    """A streamed `hi` on one surface (chat, messages, responses), in the session named."""
    paths = {"chat": "/v1/chat/completions", "messages": "/v1/messages", "responses": "/v1/responses"}
    body: dict[str, object] = {"model": "tandem", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    if surface == "messages":
        body["max_tokens"] = 10
    elif surface == "responses":
        body = {"model": "tandem", "stream": True, "input": "hi"}
    return client.post(f"{server.url}{paths[surface]}", json=body, headers={"X-Session-ID": session})


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


# An upstream that fails mid-generation says so in an event of its own (OpenAI's `{"error": {…}}`,
# a bare text, vLLM's older top-level error), often still followed by [DONE]; then nothing more.
UPSTREAM_ERRORS = {
    "openai": b'data: {"error":{"message":"oops","type":"server_error"}}\n\n',
    "text": b'data: {"error":"oops"}\n\n',
    "vllm": b'data: {"object":"error","message":"oops","type":"InternalServerError","code":500}\n\n',
}


@pytest.mark.parametrize("shape", sorted(UPSTREAM_ERRORS))
@pytest.mark.parametrize("surface", ["chat", "messages", "responses"])
def test_an_error_event_from_the_upstream_ends_the_stream_and_records_an_error(
    make_gateway: Callable[..., GatewayServer],
    client: httpx.Client,
    edge: FakeUpstream,
    surface: str,
    shape: str,
) -> None:
    """It was relayed as if it were a chunk: the step recorded `ok`, the chat stream went on
    with a usage estimate, and the translated surfaces began an answer after their error event
    (`message_start` after `error`, `response.created` after `response.failed`)."""
    server = make_gateway(routes=EDGE_ONLY)
    before = _event({"role": "assistant", "content": "par"}) + _event({"content": "tial"})
    stream = before + UPSTREAM_ERRORS[shape] + DONE
    edge.push({"kind": "raw", "status": 200, "content_type": "text/event-stream", "body": stream.decode()})
    session = f"error-event-{surface}-{shape}"
    response = _streamed(client, server, surface, session)
    assert response.status_code == 200
    events = _events(response.content)
    if surface == "chat":
        assert events[-2] == UPSTREAM_ERRORS[shape].strip() and events[-1] == b"data: [DONE]", events
        assert b"tandem_estimated" not in response.content  # no answer's usage after the error
    elif surface == "messages":
        assert events[-1].startswith(b"event: error\n") and b'"message":"oops"' in events[-1], events
        assert not any(b"message_start" in e for e in events[events.index(events[-1]) :]), events
        assert b"message_start" in events[0], events
    else:
        assert events[-1].startswith(b"event: response.failed\n") and b'"message":"oops"' in events[-1], events
        assert sum(b"event: response.created" in e for e in events) == 1, events
    record = client.get(f"{server.url}/v1/trajectories/{session}").json()["records"][0]
    assert record["status"] == "error", record
    assert "error event" in record["error"] and "oops" in record["error"], record


@pytest.mark.parametrize("shape", sorted(UPSTREAM_ERRORS))
@pytest.mark.parametrize("failover", [False, True])
def test_a_stream_that_begins_with_an_error_event_fails_over_or_is_a_502(
    make_gateway: Callable[..., GatewayServer],
    client: httpx.Client,
    edge: FakeUpstream,
    cloud: FakeUpstream,
    shape: str,
    failover: bool,
) -> None:
    """Nothing has reached the client: the other target answers where the route allows it (the
    error was relayed as the answer before, and the step never failed over), else a 502."""
    error = _broken_start(make_gateway, client, edge, cloud, UPSTREAM_ERRORS[shape] + DONE, failover)
    if error is not None:
        assert "began with an error event" in error["message"]
        assert "oops" in error["message"] and not cloud.received


def _broken_start(
    make_gateway: Callable[..., GatewayServer],
    client: httpx.Client,
    edge: FakeUpstream,
    cloud: FakeUpstream,
    stream: bytes,
    failover: bool,
) -> dict[str, Any] | None:
    """An edge route's streamed step whose upstream stream begins as `stream`: with failover,
    the cloud's answer (None); without, the 502's error, an invalid answer."""
    server = make_gateway(routes={"tandem": {"strategy": "edge", "failover": failover}})
    edge.push({"kind": "raw", "status": 200, "content_type": "text/event-stream", "body": stream.decode()})
    body = {"model": "tandem", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    response = client.post(f"{server.url}/v1/chat/completions", json=body)
    if failover:
        assert response.status_code == 200 and response.headers["x-tandem-fallback"] == "true"
        assert _events(response.content)[-1] == b"data: [DONE]" and len(cloud.received) == 1
        return None
    assert response.status_code == 502, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == "upstream_invalid_answer"
    return error


def test_only_whole_events_go_out_however_the_bytes_are_cut() -> None:
    """The relay sends up to the last event's end (any of SSE's three line ends) and holds the
    rest, cut anywhere; what it holds at the end is the event left open."""
    import random

    from router.streaming import _Whole

    rng = random.Random(1)
    events = [b'data: {"a": %d}\n\n' % i for i in range(200)] + [b"data: x\r\n\r\n", b"data: y\r\r", b"data: z\n\n"]
    stream = b"".join(events) + b'data: {"half'
    for _ in range(200):
        whole, out, position = _Whole(), b"", 0
        while position < len(stream):
            size = rng.randint(1, 40)
            sent = whole.feed(stream[position : position + size])
            position += size
            assert sent == b"" or sent.endswith((b"\n\n", b"\r\r", b"\r\n\r\n"))
            out += sent
        assert out == b"".join(events)
        assert whole.flush() == b'data: {"half'


@pytest.mark.parametrize("surface", ["chat", "messages"])
def test_a_stream_whose_lines_end_in_a_bare_cr_is_read_event_by_event(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream, surface: str
) -> None:
    """SSE lets a line end in a carriage return alone. Such a stream was not read event by event:
    its usage went unread (the step charged an estimate, the client sent a second usage chunk)
    and the Messages surface had no answer to translate."""
    server = make_gateway(routes=EDGE_ONLY)
    stream = (_answer("hello") + DONE).replace(b"\n", b"\r")
    edge.push({"kind": "raw", "status": 200, "content_type": "text/event-stream", "body": stream.decode()})
    session = f"bare-cr-{surface}"
    if surface == "chat":
        body: dict[str, object] = {"model": "tandem", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        response = client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": session})
        events = _events(response.content)
        assert events[-1] == b"data: [DONE]" and b'"content":"hello"' in response.content, events
        assert b"tandem_estimated" not in response.content and response.content.count(b'"usage":{') == 1
    else:
        body = {"model": "tandem", "stream": True, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
        response = client.post(f"{server.url}/v1/messages", json=body, headers={"X-Session-ID": session})
        assert b'"text":"hello"' in response.content and b"event: message_stop" in response.content
    record = client.get(f"{server.url}/v1/trajectories/{session}").json()["records"][0]
    assert record["status"] == "ok" and record["usage_estimated"] is False, record
    assert (record["usage"]["prompt_tokens"], record["usage"]["completion_tokens"]) == (3, 2)


def test_only_a_carriage_return_alone_ends_the_first_line_of_a_bare_cr_stream() -> None:
    from router.stream_source import bare_cr_lines

    assert bare_cr_lines(b"data: {}\r\rdata: x\r\r")
    assert not bare_cr_lines(b"data: {}\r\n\r\n")  # CRLF
    assert not bare_cr_lines(b"data: {}\n\n")
    assert not bare_cr_lines(b"data: {}\n\ndata: a\rb\n\n")  # a line feed ends the first line
    assert not bare_cr_lines(b"data: {}\r")  # may be the first half of a CRLF
    assert not bare_cr_lines(b"data: {")


UNREADABLE = {
    "broken JSON": b"data: {not json}\n\n",
    "a string": b'data: "hello"\n\n',
    "a page": b"data: <html><body>Bad Gateway</body></html>\n\n",
    "after a comment": b": keep-alive\n\ndata: {oops\n\n",
}


@pytest.mark.parametrize("shape", sorted(UNREADABLE))
@pytest.mark.parametrize("failover", [False, True])
def test_a_stream_whose_first_event_is_no_json_object_fails_over_or_is_a_502(
    make_gateway: Callable[..., GatewayServer],
    client: httpx.Client,
    edge: FakeUpstream,
    cloud: FakeUpstream,
    shape: str,
    failover: bool,
) -> None:
    """A broken server's stream (relayed before with a 200 and a made-up usage): nothing has
    reached the client, so the other target answers where the route allows it, else a 502."""
    error = _broken_start(make_gateway, client, edge, cloud, UNREADABLE[shape] + DONE, failover)
    if error is not None:
        assert "not a JSON object" in error["message"] and not cloud.received


def test_a_first_event_of_json_over_several_data_lines_is_read_as_one() -> None:
    """SSE joins an event's data lines: JSON written over two of them is an answer, not nonsense."""
    from router.upstream import _first_event_unreadable

    split = b'data: {"id": "c",\ndata: "choices": []}\n\n'
    assert not _first_event_unreadable(b": ping\n\n" + split)
    assert not _first_event_unreadable(b'data: {"id": "c", "choi')  # not whole yet: not judged
    assert not _first_event_unreadable(b"data: [DONE]\r\n\r\n")
    assert not _first_event_unreadable(b'data: {"id": "c"}\ndata: [DONE]\n\n')  # a marker on its last line
    assert _first_event_unreadable(b"data: [1, 2]\r\n\r\n")


@pytest.mark.parametrize("where", ["chat", "messages", "responses"])
@pytest.mark.parametrize("bad", [b"data: {not json\n\n", b"data: <html>Bad Gateway</html>\n\n"], ids=["cut", "page"])
def test_an_event_that_is_not_json_mid_stream_ends_it_with_an_error(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream, where: str, bad: bytes
) -> None:
    """An upstream's event that is not JSON after its answer began was passed on to the chat
    client (whose SDK then failed to parse it) and dropped on the other surfaces, the step
    recorded `ok`: the stream ends there with an error event, and the step is an error."""
    server = make_gateway(routes=EDGE_ONLY)
    stream = _event({"role": "assistant", "content": "par"}) + bad + _event({"content": "tial"}, "stop") + USAGE + DONE
    edge.push({"kind": "raw", "status": 200, "content_type": "text/event-stream", "body": stream.decode()})
    session = f"not-json-{where}-{len(bad)}"
    response = _streamed(client, server, where, session)
    assert response.status_code == 200
    events = _events(response.content)
    assert bad.strip() not in response.content and b"tial" not in response.content
    if where == "chat":
        assert b'"code":"upstream_invalid_event"' in events[-2] and events[-1] == b"data: [DONE]", events
    elif where == "messages":
        assert events[-1].startswith(b"event: error\n") and b"not JSON" in events[-1], events
    else:
        assert events[-1].startswith(b"event: response.failed\n") and b"not JSON" in events[-1], events
    record = client.get(f"{server.url}/v1/trajectories/{session}").json()["records"][0]
    assert record["status"] == "error" and "not JSON" in record["error"], record
