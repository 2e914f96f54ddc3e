"""Idle keep-alive connections: the server keeps them longer than clients do, so that a client
never sends a request into a connection the server is closing in the same instant (the race
that loses a request when both sides use 5 s, uvicorn's and httpx's default)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import httpx

from router.settings import load_settings
from tests.gateway_server import GatewayServer

REQUEST = b"GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n"


def _ask(sock: socket.socket) -> bytes:
    sock.sendall(REQUEST)
    answer = sock.recv(65536)
    return answer


def test_the_default_outlasts_the_clients_idle_expiry() -> None:
    settings = load_settings()
    # httpx (the openai SDK) drops idle connections after 5 s; a load balancer after 60 s.
    assert settings.server.keep_alive_s > max(httpx.Limits().keepalive_expiry or 0, 60)


def test_the_server_keeps_an_idle_connection_for_keep_alive_s(make_gateway: Callable[..., GatewayServer]) -> None:
    server = make_gateway(server={"keep_alive_s": 1})
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        assert _ask(sock).startswith(b"HTTP/1.1 200")
        time.sleep(0.5)
        assert _ask(sock).startswith(b"HTTP/1.1 200")  # still open within keep_alive_s
        time.sleep(1.6)
        sock.settimeout(1)
        assert sock.recv(1) == b""  # closed by the server once idle for longer


def _closed(sock: socket.socket, wait_s: float = 2.0) -> bool:
    """Whether the server closed `sock` (it reads its end) within `wait_s`."""
    sock.settimeout(wait_s)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_idle_connections_past_the_cap_are_closed_longest_idle_first(
    make_gateway: Callable[..., GatewayServer],
) -> None:
    server = make_gateway(limits={"max_idle_connections": 3})
    socks = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(5)]
    try:
        for sock in socks:
            assert _ask(sock).startswith(b"HTTP/1.1 200")  # answered, now idle: oldest first
            time.sleep(0.05)
        # Five idle, three allowed: the two that went idle first are closed, the rest kept.
        assert _closed(socks[0]) and _closed(socks[1])
        assert not any(_closed(sock, 0.3) for sock in socks[2:])
        # A connection in use is not idle: asking again makes sock 2 the most recent, so the
        # next one to go idle past the cap closes sock 3, the longest idle now.
        assert _ask(socks[2]).startswith(b"HTTP/1.1 200")
        late = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        socks.append(late)
        assert _ask(late).startswith(b"HTTP/1.1 200")
        assert _closed(socks[3])
        assert not any(_closed(sock, 0.3) for sock in (socks[2], socks[4], late))
        with httpx.Client() as http:
            metrics = http.get(f"{server.url}/metrics").text
        assert 'tandem_limit_exceeded_total{limit="max_idle_connections"} 3.0' in metrics
    finally:
        for sock in socks:
            sock.close()


def test_the_idle_connection_cap_has_a_default() -> None:
    assert load_settings().limits.max_idle_connections == 1000


def test_each_idle_connection_is_timed_from_its_own_last_answer(make_gateway: Callable[..., GatewayServer]) -> None:
    # One timer times every idle connection: it must close each when its own keep_alive_s is
    # up, not all at the first one's, and never a connection that was used since.
    server = make_gateway(server={"keep_alive_s": 1})
    first = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    second = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    try:
        assert _ask(first).startswith(b"HTTP/1.1 200")
        time.sleep(0.6)
        assert _ask(second).startswith(b"HTTP/1.1 200")
        # `first` goes at ~1 s; `second`, idle since 0.6 s, is still kept then.
        assert _closed(first, 0.8)
        assert not _closed(second, 0.1)
        assert _ask(second).startswith(b"HTTP/1.1 200")  # used again: timed afresh
        time.sleep(0.7)
        assert not _closed(second, 0.1)
        assert _closed(second, 1.0)
    finally:
        first.close()
        second.close()
