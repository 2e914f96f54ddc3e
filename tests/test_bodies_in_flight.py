"""A gateway-wide bound on request body bytes being received (`limits.max_body_bytes_in_flight`):
a body that would pass it while others are held gets an OpenAI-shaped 503 with Retry-After,
counted like the other limits; a body alone always fits; every path gives its bytes back. And a
body late because the gateway did not read it (its loop was busy) is not timed out as the
client's fault (`limits.body_timeout_s`)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

import httpx
import orjson

from router.server import BodiesInFlight
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, wait_until

EDGE_ONLY = {"tandem": {"strategy": "edge", "failover": False}}
BUDGET = 64 * 1024


def _body(pad: int) -> bytes:
    return orjson.dumps({"model": "tandem", "messages": [{"role": "user", "content": "hi"}], "pad": "p" * pad})


def _head(length: int) -> bytes:
    return (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n" % length
    )


def _read_all(sock: socket.socket) -> bytes:
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    return answer


def _held(server: GatewayServer) -> int:
    bodies: BodiesInFlight = server._server.config.bodies
    return bodies.held


def test_a_body_that_would_pass_the_bound_while_another_is_held_gets_a_503(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream
) -> None:
    server = make_gateway(routes=EDGE_ONLY, limits={"max_body_bytes_in_flight": BUDGET})
    slow = _body(50_000)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as held:
        # A body not all sent: what came counts until the gateway has it whole.
        held.sendall(_head(len(slow)) + slow[:40_000])
        assert wait_until(lambda: _held(server) >= 40_000), _held(server)
        response = client.post(
            f"{server.url}/v1/chat/completions", content=_body(30_000), headers={"content-type": "application/json"}
        )
        assert response.status_code == 503, response.text
        assert response.headers["retry-after"] == "1"
        error = response.json()["error"]
        assert error["type"] == "server_error" and error["code"] == "bodies_in_flight_full"
        assert f"limit of {BUDGET} bytes (limits.max_body_bytes_in_flight)" in error["message"]
        # A small one still fits beside it.
        small = client.post(
            f"{server.url}/v1/chat/completions",
            json={"model": "tandem", "messages": [{"role": "user", "content": "hi"}]},
        )
        assert small.status_code == 200, small.text
        held.sendall(slow[40_000:])
        assert _read_all(held).startswith(b"HTTP/1.1 200 "), "the held body, once whole, is served"
    assert wait_until(lambda: _held(server) == 0), _held(server)
    # The refused one, retried once the other is through, is served.
    retried = client.post(
        f"{server.url}/v1/chat/completions", content=_body(30_000), headers={"content-type": "application/json"}
    )
    assert retried.status_code == 200, retried.text
    metrics = client.get(f"{server.url}/metrics").text
    assert 'tandem_limit_exceeded_total{limit="max_body_bytes_in_flight"} 1.0' in metrics


def test_a_body_alone_larger_than_the_bound_is_served(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream
) -> None:
    server = make_gateway(routes=EDGE_ONLY, limits={"max_body_bytes_in_flight": BUDGET})
    response = client.post(
        f"{server.url}/v1/chat/completions", content=_body(4 * BUDGET), headers={"content-type": "application/json"}
    )
    assert response.status_code == 200, response.text
    assert wait_until(lambda: _held(server) == 0), _held(server)


def test_bodies_not_read_by_the_application_give_their_bytes_back(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, edge: FakeUpstream
) -> None:
    """Answered without reading the body (401), refused mid-body (413 past max_body_bytes), or
    left by its client mid-body: none keeps its bytes counted."""
    server = make_gateway(
        routes=EDGE_ONLY,
        client_api_keys=["sk-right"],
        max_body_bytes=32 * 1024,
        limits={"max_body_bytes_in_flight": BUDGET},
    )
    denied = client.post(
        f"{server.url}/v1/chat/completions", content=_body(20_000), headers={"authorization": "Bearer wrong"}
    )
    assert denied.status_code == 401
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        chunked = (
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-right\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        )
        piece = b"x" * 20_000
        sock.sendall(chunked + (b"%x\r\n" % len(piece) + piece + b"\r\n") * 2)
        assert _read_all(sock).startswith(b"HTTP/1.1 413 ")
    left = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    authorized = _head(30_000).replace(b"Connection", b"Authorization: Bearer sk-right\r\nConnection")
    left.sendall(authorized + b"{" * 10_000)
    assert wait_until(lambda: _held(server) >= 10_000)
    left.close()
    assert wait_until(lambda: _held(server) == 0), _held(server)


def test_a_body_the_gateway_did_not_read_is_not_timed_out_as_the_clients(
    make_gateway: Callable[..., GatewayServer], edge: FakeUpstream
) -> None:
    """The client sends its whole body while the gateway's loop is busy for longer than
    `body_timeout_s`: once the loop runs again the body timer is due with bytes still unread in
    the socket (a read takes at most a few hundred KB). Before, that was a 408."""
    server = make_gateway(routes=EDGE_ONLY, limits={"body_timeout_s": 1})
    body = _body(6 * 1024 * 1024)

    async def busy() -> None:
        time.sleep(3)  # noqa: ASYNC251  # the loop held on purpose, as a long parse of another body holds it

    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(_head(len(body)) + body[:1])
        assert wait_until(lambda: _held(server) >= 1)  # the timer is armed
        blocker = threading.Thread(target=server.run, args=(busy(),))
        blocker.start()
        sock.sendall(body[1:])  # blocks until the gateway reads again: all sent, none refused
        blocker.join()
        answer = _read_all(sock)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:300]
