"""An upstream whose status line is nonsense (600, 999, 000, two digits, letters, no HTTP at all)
is a broken upstream: the client gets a 502 in OpenAI's shape (or the other target's answer when
the route fails over), plain or streamed, and keeps its connection. Against a real gateway and a
TCP upstream that answers with the bytes a test gives it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator

import httpx
import orjson
import pytest

from router.config.limits import LimitSettings
from router.config.upstream import Timeouts, UpstreamSettings
from router.upstream import Upstream, UpstreamFailure
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer
from tests.transport_suite.transports import TRANSPORTS

NONSENSE = [b"HTTP/1.1 600 Odd", b"HTTP/1.1 999 Odd", b"HTTP/1.1 000 Odd", b"HTTP/1.1 20 OK", b"HTTP/1.1 abc OK"]


class StatusUpstream:
    """Answers every request with `status_line`, JSON headers and a small error body, then
    closes; a thread per connection."""

    def __init__(self, status_line: bytes) -> None:
        self.status_line = status_line
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(16)
        self.port = self._socket.getsockname()[1]
        threading.Thread(target=self._accept, name="status-upstream", daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            data = b""
            while b"\r\n\r\n" not in data:
                data += connection.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(int(line[15:]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
            while len(body) < length:
                body += connection.recv(65536)
            payload = b'{"error": {"message": "odd"}}'
            head = b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(payload)
            connection.sendall(self.status_line + head + payload)

    def close(self) -> None:
        self._socket.close()


@pytest.fixture(params=NONSENSE, ids=lambda line: line.decode())
def odd_upstream(request: pytest.FixtureRequest) -> Iterator[StatusUpstream]:
    upstream = StatusUpstream(request.param)
    yield upstream
    upstream.close()


def _ask(client: httpx.Client, server: GatewayServer, stream: bool) -> httpx.Response:
    body = {"model": "tandem", "stream": stream, "messages": [{"role": "user", "content": "hi"}]}
    return client.post(f"{server.url}/v1/chat/completions", json=body)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_nonsense_status_is_a_502_in_openai_shape(
    make_gateway: Callable[..., GatewayServer], odd_upstream: StatusUpstream, stream: bool
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge", "failover": False}}, edge_url=odd_upstream.base_url)
    with httpx.Client(timeout=10) as client:
        response = _ask(client, server, stream)
        assert response.status_code == 502, response.text
        error = orjson.loads(response.content)["error"]
        assert error["code"] == "upstream_invalid_answer"
        assert error["type"] == "server_error"
        assert "is not" in error["message"]
        # The client's connection was answered, not dropped: it serves the next request.
        assert client.get(f"{server.url}/healthz").status_code == 200
        assert client.get(f"{server.url}/healthz").status_code == 200


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_nonsense_status_fails_over_to_the_other_target(
    make_gateway: Callable[..., GatewayServer], odd_upstream: StatusUpstream, cloud: FakeUpstream, stream: bool
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge", "failover": True}}, edge_url=odd_upstream.base_url)
    with httpx.Client(timeout=10) as client:
        response = _ask(client, server, stream)
        assert response.status_code == 200, response.text
        assert response.headers["x-tandem-target"] == "cloud"
        assert len(cloud.received) == 1


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
async def test_either_transport_takes_a_nonsense_status_for_an_invalid_answer(
    odd_upstream: StatusUpstream, transport: str, stream: bool
) -> None:
    """The same for aiohttp (the https upstreams' client) as for the lean HTTP/1.1 client."""
    settings = UpstreamSettings(base_url=odd_upstream.base_url, model="m", timeouts=Timeouts(connect=2, first_byte=5))
    session = TRANSPORTS[transport](settings)
    upstream = Upstream("edge", settings, LimitSettings(), lambda limit: None, session)
    try:
        with pytest.raises(UpstreamFailure) as failure:
            await upstream.send(b'{"model": "m", "messages": []}', stream)
        assert failure.value.kind == "invalid_answer", failure.value
        assert failure.value.status is None  # nothing relayed as the upstream's own status
    finally:
        await session.close()
