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
