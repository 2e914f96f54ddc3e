"""`limits` on what upstreams send: a plain answer, a stream, one event of a stream, against a
real gateway and misbehaving upstreams, each counted in `tandem_limit_exceeded_total`."""

from __future__ import annotations

import gzip
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import orjson
import pytest
from aiohttp import web

from router.stream_events import EventTooLong, Observer
from tests.gateway_server import GatewayServer, chat, limit_count
from tests.raw_upstream import RawUpstream, stream_bytes

EDGE_ONLY = {"tandem": {"strategy": "edge", "failover": False}}


@pytest.fixture()
def raw_upstream() -> Iterator[Callable[..., RawUpstream]]:
    started: list[RawUpstream] = []

    def make(routes: dict[tuple[str, str], Any]) -> RawUpstream:
        upstream = RawUpstream(routes).start()
        started.append(upstream)
        return upstream

    yield make
    for upstream in started:
        upstream.stop()


def _completion(text: str) -> bytes:
    return orjson.dumps(
        {
            "id": "chatcmpl-big",
            "object": "chat.completion",
            "created": 0,
            "model": "edge-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        }
    )


@pytest.mark.parametrize("declared", ["length", "chunked", "gzip"], ids=["content-length", "chunked", "gzip"])
def test_an_oversized_plain_answer_is_502(
    declared: str,
    make_gateway: Callable[..., GatewayServer],
    raw_upstream: Callable[..., RawUpstream],
    client: httpx.Client,
) -> None:
    big = _completion("x" * 3_000_000)

    async def answer(request: web.Request) -> web.StreamResponse:
        await request.read()
        if declared == "length":
            return web.Response(body=big, content_type="application/json")
        if declared == "gzip":
            # A few KB on the wire, with its Content-Length, that inflate to 3 MB: what counts
            # against the limit is the answer as read, not the length declared.
            squeezed = gzip.compress(big)
            assert len(squeezed) < 1_000_000
            headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
            return web.Response(body=squeezed, headers=headers)
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        for start in range(0, len(big), 65536):
            await response.write(big[start : start + 65536])
        await response.write_eof()
        return response

    upstream = raw_upstream({("POST", "/v1/chat/completions"): answer})
    server = make_gateway(routes=EDGE_ONLY, edge_url=upstream.base_url, limits={"max_answer_bytes": 1_000_000})
    response = chat(client, server.url)
    assert response.status_code == 502, response.text
    error = response.json()["error"]
    assert error["code"] == "answer_too_large"
    assert "1000000" in error["message"] and "limits.max_answer_bytes" in error["message"]
    assert limit_count(client, server, "max_answer_bytes") == 1


def _event(text: str) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def _stream(client: httpx.Client, server: GatewayServer) -> bytes:
    with client.stream(
        "POST",
        f"{server.base_url}/chat/completions",
        json={"model": "tandem", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    ) as response:
        assert response.status_code == 200
        return b"".join(response.iter_bytes())


def _error_events(body: bytes) -> list[dict[str, Any]]:
    errors = []
    for block in body.split(b"\n\n"):
        if block.startswith(b"data: {") and b'"error"' in block[:20]:
            errors.append(orjson.loads(block[6:])["error"])
    return errors


def test_an_oversized_stream_ends_with_an_error_event(
    make_gateway: Callable[..., GatewayServer], raw_upstream: Callable[..., RawUpstream], client: httpx.Client
) -> None:
    async def answer(request: web.Request) -> web.StreamResponse:
        await request.read()
        return await stream_bytes(request, [_event("y" * 10_000) for _ in range(300)] + [b"data: [DONE]\n\n"])

    upstream = raw_upstream({("POST", "/v1/chat/completions"): answer})
    server = make_gateway(routes=EDGE_ONLY, edge_url=upstream.base_url, limits={"max_answer_bytes": 1_000_000})
    body = _stream(client, server)
    errors = _error_events(body)
    assert [e["code"] for e in errors] == ["answer_too_large"], body[-400:]
    assert "limits.max_answer_bytes" in errors[0]["message"]
    assert body.endswith(b"data: [DONE]\n\n")
    assert len(body) < 1_100_000
    assert limit_count(client, server, "max_answer_bytes") == 1


def test_an_event_that_never_ends_is_cut_off_with_an_error_event(
    make_gateway: Callable[..., GatewayServer], raw_upstream: Callable[..., RawUpstream], client: httpx.Client
) -> None:
    async def answer(request: web.Request) -> web.StreamResponse:
        await request.read()
        return await stream_bytes(request, [b'data: {"choices": "'] + [b"z" * 16384] * 200)

    upstream = raw_upstream({("POST", "/v1/chat/completions"): answer})
    server = make_gateway(routes=EDGE_ONLY, edge_url=upstream.base_url, limits={"max_sse_line_bytes": 1_000_000})
    body = _stream(client, server)
    errors = _error_events(body)
    assert [e["code"] for e in errors] == ["upstream_event_too_long"], body[-400:]
    assert "limits.max_sse_line_bytes" in errors[0]["message"]
    assert body.endswith(b"data: [DONE]\n\n")
    assert limit_count(client, server, "max_sse_line_bytes") == 1


def test_a_long_event_under_the_bound_is_relayed_whole(
    make_gateway: Callable[..., GatewayServer], raw_upstream: Callable[..., RawUpstream], client: httpx.Client
) -> None:
    text = "w" * (8 * 1024 * 1024)
    event = _event(text)

    async def answer(request: web.Request) -> web.StreamResponse:
        await request.read()
        pieces = [event[i : i + 4096] for i in range(0, len(event), 4096)]
        return await stream_bytes(request, [*pieces, b"data: [DONE]\n\n"])

    upstream = raw_upstream({("POST", "/v1/chat/completions"): answer})
    server = make_gateway(routes=EDGE_ONLY, edge_url=upstream.base_url, limits={"max_sse_line_bytes": 16 << 20})
    body = _stream(client, server)
    assert _error_events(body) == [] and body.endswith(b"data: [DONE]\n\n")
    assert text.encode() in body
    assert limit_count(client, server, "max_sse_line_bytes") == 0


def test_waiting_for_the_end_of_an_event_costs_linear_time() -> None:
    """8 MB of one event in 4 KB pieces: joining what waits to every piece copied ~8 GB (seconds;
    a 32 MB event took 4.6 s through the gateway); growing one buffer copies each byte once."""
    observer = Observer(max_event_bytes=16 << 20)
    piece = b"v" * 4096
    started = time.perf_counter()
    observer.feed(b'data: {"choices": [{"delta": {"content": "')
    for _ in range(2048):
        observer.feed(piece)
    observer.feed(b'"}}]}\r\n\r\ndata: [DONE]\n\n')
    elapsed = time.perf_counter() - started
    assert observer.events == 2 and not observer.partial
    assert elapsed < 0.5, elapsed
    with pytest.raises(EventTooLong):
        Observer(max_event_bytes=4096).feed(b"data: " + b"u" * 5000)


@pytest.mark.parametrize("status", [301, 307, 308])
def test_a_redirecting_upstream_is_a_failure_said_plainly(
    status: int,
    make_gateway: Callable[..., GatewayServer],
    raw_upstream: Callable[..., RawUpstream],
    client: httpx.Client,
) -> None:
    async def redirect(request: web.Request) -> web.StreamResponse:
        await request.read()
        return web.Response(status=status, headers={"Location": "https://elsewhere.example/v1/chat/completions"})

    upstream = raw_upstream({("POST", "/v1/chat/completions"): redirect})
    server = make_gateway(routes=EDGE_ONLY, edge_url=upstream.base_url)
    response = chat(client, server.url)
    assert response.status_code == 502, response.text
    message = response.json()["error"]["message"]
    assert f"HTTP {status}" in message and "https://elsewhere.example" in message and "base_url" in message
    # With failover on, the other upstream answers the step.
    failing_over = make_gateway(routes={"tandem": {"strategy": "edge", "failover": True}}, edge_url=upstream.base_url)
    assert chat(client, failing_over.url).status_code == 200
