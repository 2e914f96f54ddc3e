"""An upstream whose status line is nonsense (600, 999, 000, two digits, letters, no HTTP at all)
is a broken upstream: the client gets a 502 in OpenAI's shape (or the other target's answer when
the route fails over), plain or streamed, and keeps its connection. Against a real gateway and a
TCP upstream that answers with the bytes a test gives it (tests/raw_upstream.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import orjson
import pytest

from router.config.upstream import Timeouts
from router.upstream import UpstreamFailure
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer
from tests.raw_upstream import ByteUpstream
from tests.transport_suite.transports import TRANSPORTS, started

NONSENSE = [b"HTTP/1.1 600 Odd", b"HTTP/1.1 999 Odd", b"HTTP/1.1 000 Odd", b"HTTP/1.1 20 OK", b"HTTP/1.1 abc OK"]


@pytest.fixture(params=NONSENSE, ids=lambda line: line.decode())
def odd_upstream(request: pytest.FixtureRequest) -> Iterator[ByteUpstream]:
    payload = b'{"error": {"message": "odd"}}'
    head = b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(payload)
    upstream = ByteUpstream(request.param + head + payload)
    yield upstream
    upstream.stop()


def _ask(client: httpx.Client, server: GatewayServer, stream: bool) -> httpx.Response:
    body = {"model": "tandem", "stream": stream, "messages": [{"role": "user", "content": "hi"}]}
    return client.post(f"{server.url}/v1/chat/completions", json=body)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_nonsense_status_is_a_502_in_openai_shape(
    make_gateway: Callable[..., GatewayServer], odd_upstream: ByteUpstream, stream: bool
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
    make_gateway: Callable[..., GatewayServer], odd_upstream: ByteUpstream, cloud: FakeUpstream, stream: bool
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge", "failover": True}}, edge_url=odd_upstream.base_url)
    with httpx.Client(timeout=10) as client:
        response = _ask(client, server, stream)
        assert response.status_code == 200, response.text
        assert response.headers["x-tandem-target"] == "cloud"
        assert len(cloud.received) == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
async def test_either_transport_takes_a_nonsense_status_for_an_invalid_answer(
    odd_upstream: ByteUpstream, transport: str, stream: bool
) -> None:
    """The same for aiohttp (the https upstreams' client) as for the lean HTTP/1.1 client."""
    upstream = await started(transport, base_url=odd_upstream.base_url, timeouts=Timeouts(connect=2, first_byte=5))
    try:
        with pytest.raises(UpstreamFailure) as failure:
            await upstream.send(b'{"model": "m", "messages": []}', stream)
        assert failure.value.kind == "invalid_answer", failure.value
        assert failure.value.status is None  # nothing relayed as the upstream's own status
    finally:
        await upstream.close()
