"""A real gateway in front of an upstream that breaks HTTP itself (bytes that are not an answer,
an endless head, a body cut short, a connection closed at once): every step gets an
OpenAI-shaped error (502 or 503) or fails over, never a 500 or a hang, and is counted by kind. The upstream
is a TCP server on 127.0.0.1 that answers every request with the bytes a test gives it
(tests/raw_upstream.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.gateway_server import GatewayServer, chat
from tests.raw_upstream import ByteUpstream

EDGE_ONLY = {"tandem": {"strategy": "edge", "failover": False}}


@pytest.fixture()
def byte_upstream() -> Iterator[Callable[..., ByteUpstream]]:
    started: list[ByteUpstream] = []

    def make(answer: bytes) -> ByteUpstream:
        upstream = ByteUpstream(answer)
        started.append(upstream)
        return upstream

    yield make
    for upstream in started:
        upstream.stop()


def _errors(client: httpx.Client, server: GatewayServer, kind: str) -> float:
    prefix = f'tandem_upstream_errors_total{{kind="{kind}",upstream="edge"}}'
    for line in client.get(f"{server.url}/metrics").text.splitlines():
        if line.startswith(prefix):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.mark.parametrize(
    ("answer", "kind", "status", "detail"),
    [
        (b"SSH-2.0-OpenSSH_9.6\r\n", "invalid_answer", 502, "not valid HTTP/1.1"),
        (b"HTTP/1.1 200 OK\r\nX-Endless: " + b"v" * 200_000, "invalid_answer", 502, "headers passed"),
        (
            b'HTTP/1.1 200 OK\r\nContent-Length: 500\r\nContent-Type: application/json\r\n\r\n{"id":',
            "disconnected",
            503,
            "middle of the answer",
        ),
        (b"", "disconnected", 503, "before answering"),
    ],
    ids=["not-http", "endless-head", "cut-body", "closed-at-once"],
)
def test_an_upstream_that_breaks_http_gets_an_error_or_a_failover(
    answer: bytes,
    kind: str,
    status: int,
    detail: str,
    make_gateway: Callable[..., GatewayServer],
    byte_upstream: Callable[..., ByteUpstream],
    client: httpx.Client,
) -> None:
    upstream = byte_upstream(answer)
    server = make_gateway(routes=EDGE_ONLY, edge_url=upstream.base_url)
    # Bytes that are not an answer are the upstream's fault (502 upstream_invalid_answer); a
    # connection that breaks is an upstream that did not answer (503, with Retry-After).
    response = chat(client, server.url)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] and error["code"] and detail in error["message"], error
    if status == 503:
        assert response.headers["retry-after"]
    assert _errors(client, server, kind) == 1
    # The next step is answered the same way (the pool is whole), and with failover on the
    # cloud answers it.
    assert chat(client, server.url).status_code == status
    failing_over = make_gateway(routes={"tandem": {"strategy": "edge", "failover": True}}, edge_url=upstream.base_url)
    answered = chat(client, failing_over.url)
    assert answered.status_code == 200 and answered.headers["x-tandem-fallback"] == "true"
