"""The chat path served without Starlette's routing, middlewares and `Request` (router/app.py
`TandemApp`, router/api/chat.py `scope_step`, router/server.py `JoinedCycle.send_whole`)
answers every request as the declared route behind the middlewares does.

One real gateway serves both ways: a request with the `x-test-path: declared` header goes
through FastAPI's own `__call__` (its routing, its exception middlewares, the `chat_completions`
route with a Starlette `Request` and `Response`), any other the way the gateway serves it. Each
case is sent both ways over a real socket and must get the same status, body and headers."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, settings_for

DECLARED = (b"x-test-path", b"declared")
CHAT = "/v1/chat/completions"
BODY = b'{"model": "tandem", "messages": [{"role": "user", "content": "x"}]}'
# Headers that differ between two answers of the same request whichever way it went.
VARYING = {"date", "x-tandem-trajectory"}


def _both_ways(app: Any) -> Any:
    async def served(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and DECLARED in scope["headers"]:
            await FastAPI.__call__(app, scope, receive, send)
        else:
            await app(scope, receive, send)

    return served


@pytest.fixture()
def server(edge: FakeUpstream, cloud: FakeUpstream) -> Iterator[GatewayServer]:
    settings = settings_for(
        edge.base_url,
        cloud.base_url,
        routes={"tandem": {"strategy": "edge", "failover": True}},
        client_api_keys=["sk-good"],
        max_body_bytes=4096,
        auth_throttle={"max_failures": 3, "window_s": 60},
    )
    gateway = GatewayServer(settings, wrap=_both_ways).start()
    yield gateway
    gateway.stop()


def _raw(server: GatewayServer, request: bytes) -> bytes:
    """One request on a fresh connection, as bytes; the whole answer (the server closes)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _compared(response: httpx.Response) -> tuple[int, bytes, list[tuple[str, str]]]:
    headers = [(name, value) for name, value in response.headers.multi_items() if name not in VARYING]
    return response.status_code, response.content, headers


def _both(client: httpx.Client, server: GatewayServer, method: str, path: str = CHAT, **kwargs: Any) -> Any:
    """The answer the gateway's way, and the declared route's, each as (status, body, headers)."""
    headers = kwargs.pop("headers", {})
    fast = client.request(method, f"{server.url}{path}", headers=headers, **kwargs)
    declared = client.request(method, f"{server.url}{path}", headers={**headers, "x-test-path": "declared"}, **kwargs)
    return _compared(fast), _compared(declared)


KEY = {"authorization": "Bearer sk-good", "content-type": "application/json"}


@pytest.mark.parametrize(
    ("content", "headers", "status"),
    [
        (b"{not json", KEY, 400),
        (b"", KEY, 400),
        (b'{"model": "tandem"}', KEY, 400),
        (b'{"model": "gpt-x", "messages": [{"role": "user", "content": "x"}]}', KEY, 404),
        (BODY, {**KEY, "content-type": "text/plain"}, 200),  # the body is read as JSON whatever its type
        (BODY, {**KEY, "x-tandem-target": "moon"}, 400),
        (BODY, {"content-type": "application/json"}, 401),  # no key
        (BODY, {**KEY, "authorization": "Bearer sk-bad"}, 401),
        (b'{"model": "tandem", "messages": [{"role": "user", "content": "' + b"x" * 5000 + b'"}]}', KEY, 413),
    ],
)
def test_each_answer_is_the_declared_routes(
    server: GatewayServer, client: httpx.Client, content: bytes, headers: dict[str, str], status: int
) -> None:
    fast, declared = _both(client, server, "POST", content=content, headers=headers)
    assert fast[0] == status, fast
    assert fast == declared


def test_an_answer_and_its_step_headers_are_the_declared_routes(server: GatewayServer, client: httpx.Client) -> None:
    fast, declared = _both(client, server, "POST", content=BODY, headers={**KEY, "x-session-id": "s-1"})
    assert fast[0] == 200
    names = [name for name, _ in fast[2]]
    assert {"x-tandem-target", "x-tandem-route", "x-tandem-step", "content-length"} <= set(names)
    # The same body again in the same session is the client's retry of the step: step 1 again.
    assert fast == declared


def test_a_session_in_the_path_names_the_trajectory_both_ways(server: GatewayServer, client: httpx.Client) -> None:
    for path in ("/s/run-7/v1/chat/completions", "/s/run-7/chat/completions"):
        fast = client.post(f"{server.url}{path}", content=BODY, headers=KEY)
        declared = client.post(f"{server.url}{path}", content=BODY, headers={**KEY, "x-test-path": "declared"})
        assert fast.status_code == declared.status_code == 200
        assert fast.headers["x-tandem-trajectory"] == declared.headers["x-tandem-trajectory"]


def test_an_oversize_body_in_chunks_gets_the_same_413(server: GatewayServer, client: httpx.Client) -> None:
    big = b'{"model": "tandem", "messages": [{"role": "user", "content": "' + b"x" * 5000 + b'"}]}'

    def chunked() -> Iterator[bytes]:
        yield big[:3000]
        yield big[3000:]

    fast = client.post(f"{server.url}{CHAT}", content=chunked(), headers=KEY)
    declared = client.post(f"{server.url}{CHAT}", content=chunked(), headers={**KEY, "x-test-path": "declared"})
    assert fast.status_code == 413
    assert _compared(fast) == _compared(declared)


def test_a_body_in_several_reads_is_read_whole(server: GatewayServer, edge: FakeUpstream) -> None:
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer sk-good\r\n"
        b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
    )
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (BODY[:10], BODY[10:40], BODY[40:]))
    answer = _raw(server, head + chunks + b"0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert edge.received[-1].body["messages"] == [{"role": "user", "content": "x"}]


@pytest.mark.parametrize("method", ["GET", "HEAD", "PUT"])
def test_other_methods_on_the_chat_path_get_the_same_405(
    server: GatewayServer, client: httpx.Client, method: str
) -> None:
    fast, declared = _both(client, server, method, headers=KEY)
    assert fast[0] == 405
    assert fast == declared
    assert dict(fast[2])["allow"] == "POST"  # RFC 9110: a 405 names the methods the path takes


def test_the_key_throttle_counts_the_chat_paths_failures(server: GatewayServer, client: httpx.Client) -> None:
    for _ in range(3):
        assert (
            client.post(f"{server.url}{CHAT}", content=BODY, headers={"authorization": "Bearer sk-no"}).status_code
            == 401
        )
    fast, declared = _both(client, server, "POST", content=BODY, headers=KEY)
    assert fast[0] == 429
    assert fast == declared
    metrics = client.get(f"{server.url}/metrics").text
    assert 'tandem_auth_failures_total{key_kind="client"} 3.0' in metrics
    assert 'tandem_auth_throttled_total{key_kind="client"} 2.0' in metrics


def test_a_stream_is_answered_as_the_declared_route_answers_it(server: GatewayServer, client: httpx.Client) -> None:
    body = b'{"model": "tandem", "stream": true, "messages": [{"role": "user", "content": "x"}]}'
    fast, declared = _both(client, server, "POST", content=body, headers=KEY)
    assert fast[0] == 200 and fast[1].endswith(b"data: [DONE]\n\n")
    assert [name for name, _ in fast[2]] == [name for name, _ in declared[2]]
    assert dict(fast[2])["content-type"] == dict(declared[2])["content-type"] == "text/event-stream; charset=utf-8"


def test_a_connection_asking_to_close_is_closed_after_the_answer(server: GatewayServer) -> None:
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer sk-good\r\n"
        b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(BODY), BODY)
    )
    answer = _raw(server, request)  # returns only once the server has closed the connection
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ")
    assert b"\r\nconnection: close" in head
    assert len(body) == int(head.split(b"content-length: ")[1].split(b"\r\n")[0])
