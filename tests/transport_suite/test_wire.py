"""The wire conformance suite: what every transport must do against a well-behaved upstream, over
plain HTTP and over TLS, each case run for each transport (`TRANSPORTS`) and each scheme. The
upstream is the scripted fake (tests/fake_upstream.py) on 127.0.0.1; over TLS its certificate is
signed by a certificate authority made here, which the upstream's `ca_file` names, so the cloud
path as deployed (aiohttp over TLS, verified) runs on the wire, and the built-in client's TLS
with it. A certificate from another authority is refused at once with an upstream error that
says so, never a hang; an answer that breaks HTTP over TLS fails as it does over plain HTTP."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from router.config.upstream import Timeouts
from router.transport import TransportError
from router.upstream import Upstream, UpstreamFailure
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import chat
from tests.raw_upstream import ByteUpstream, tls_certificate
from tests.transport_suite.transports import TRANSPORTS, started

SCHEMES = ("http", "https")
BODY = orjson.dumps({"model": "edge-model", "messages": [{"role": "user", "content": "héllo"}], "x_extra": [1]})
TIMEOUTS = Timeouts(connect=2, first_byte=5, idle=2)


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """The TLS upstream's server context and the CA file that vouches for it."""
    return tls_certificate(tmp_path_factory.mktemp("wire-ca"))


@pytest.fixture(scope="module", params=SCHEMES)
def fake(request: pytest.FixtureRequest, authority: tuple[Any, Path]) -> Iterator[FakeUpstream]:
    context = authority[0] if request.param == "https" else None
    upstream = FakeUpstream("wire", ssl_context=context).start()
    yield upstream
    upstream.stop()


@pytest.fixture(params=TRANSPORTS)
async def upstream(request: pytest.FixtureRequest, fake: FakeUpstream, authority: tuple[Any, Path]) -> Any:
    fake.reset()
    https = fake.base_url.startswith("https://")
    ca_file = {"ca_file": authority[1]} if https else {}
    made = await started(request.param, base_url=fake.base_url, timeouts=TIMEOUTS, **ca_file)
    yield made
    await made.close()


async def read_stream(upstream: Upstream, body: bytes) -> list[bytes]:
    reply = await upstream.send(body, stream=True)
    assert reply.stream is not None
    parts = [reply.stream.first_chunk]
    try:
        while part := await reply.stream.chunks():
            parts.append(part)
    finally:
        reply.stream.close()
    return parts


async def test_a_plain_answer_arrives_whole_and_the_request_as_sent(upstream: Upstream, fake: FakeUpstream) -> None:
    fake.push({"kind": "text", "text": "all of it"})
    reply = await upstream.send(BODY, stream=False, trajectory_id="t-1")
    assert reply.status == 200 and reply.content_type.startswith("application/json")
    assert reply.answer["choices"][0]["message"]["content"] == "all of it"
    received = fake.received[0]
    assert received.path == "/v1/chat/completions"
    assert received.raw == BODY  # byte for byte
    assert received.headers["Content-Type"] == "application/json"
    assert received.headers["Host"] == fake.base_url.split("/")[2]
    assert "Proxy-Authorization" not in received.headers


async def test_a_stream_arrives_event_by_event(upstream: Upstream, fake: FakeUpstream) -> None:
    fake.push({"kind": "text", "text": "one two three four", "chunk_delay": 0.02})
    parts = await read_stream(upstream, orjson.dumps({**orjson.loads(BODY), "stream": True}))
    assert len(parts) >= 4  # relayed as the events came, not gathered
    events = b"".join(parts)
    assert events.endswith(b"data: [DONE]\n\n")
    assert fake.received[0].headers["Accept"] == "text/event-stream"


async def test_an_error_status_is_kept_with_its_body(upstream: Upstream, fake: FakeUpstream) -> None:
    fake.push({"kind": "error", "status": 429, "retry_after": 7})
    with pytest.raises(UpstreamFailure) as failure:
        await upstream.send(BODY, stream=False)
    assert failure.value.kind == "status" and failure.value.status == 429
    assert failure.value.retry_after == "7" and b"error" in failure.value.body


async def test_a_stream_cut_midway_is_a_transport_error(upstream: Upstream, fake: FakeUpstream) -> None:
    fake.push({"kind": "drop", "after": 2})
    with pytest.raises(TransportError):
        await read_stream(upstream, orjson.dumps({**orjson.loads(BODY), "stream": True}))


async def test_one_connection_carries_call_after_call(upstream: Upstream, fake: FakeUpstream) -> None:
    for _ in range(3):
        await upstream.send(BODY, stream=False)
    assert len({received.peer for received in fake.received}) == 1  # kept alive, over TLS too


async def test_the_readiness_probe_reaches_it(upstream: Upstream) -> None:
    state = await upstream.probe(cache_s=0)
    assert state.reachable and state.status == 200, state.detail


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("trust", ["another-ca", "system"])
async def test_a_certificate_from_an_untrusted_authority_is_refused_at_once(
    transport: str, trust: str, authority: tuple[Any, Path], tmp_path: Path
) -> None:
    tls = FakeUpstream("untrusted", ssl_context=authority[0]).start()
    # Another authority (a CA made for this test), or no ca_file: the system's store, which
    # does not hold the test's CA either.
    ca_file = {"ca_file": tls_certificate(tmp_path)[1]} if trust == "another-ca" else {}
    upstream = await started(transport, base_url=tls.base_url, timeouts=TIMEOUTS, **ca_file)
    began = time.monotonic()
    try:
        with pytest.raises(UpstreamFailure) as failure:
            await upstream.send(BODY, stream=False)
    finally:
        await upstream.close()
        tls.stop()
    assert time.monotonic() - began < 2  # refused, not waited out
    assert failure.value.kind == "connect", failure.value
    assert "TLS certificate is not trusted" in failure.value.detail, failure.value.detail
    assert ("ca_file" in failure.value.detail) and tls.received == []


async def test_an_unreachable_upstream_is_a_connect_failure_for_each_transport() -> None:
    for transport in TRANSPORTS:
        upstream = await started(transport, base_url="http://127.0.0.1:9/v1", timeouts=TIMEOUTS)
        try:
            with pytest.raises(UpstreamFailure) as failure:
                await upstream.send(BODY, stream=False)
        finally:
            await upstream.close()
        assert failure.value.kind == "connect", (transport, failure.value)


@pytest.mark.parametrize("trusted", [True, False], ids=["its-ca", "another-ca"])
def test_a_gateway_calls_a_tls_cloud_as_deployed(
    trusted: bool, authority: tuple[Any, Path], tmp_path: Path, make_gateway: Any, client: httpx.Client
) -> None:
    """The cloud as deployed: https, aiohttp (`client: auto`), verified against `ca_file`; with
    the wrong CA the step gets a 503 in OpenAI's shape that names the certificate, at once."""
    tls = FakeUpstream("tls-cloud", ssl_context=authority[0]).start()
    ca_file = authority[1] if trusted else tls_certificate(tmp_path)[1]
    try:
        server = make_gateway(
            routes={"tandem": {"strategy": "cloud", "failover": False}},
            cloud_url=tls.base_url,
            upstream_overrides={"cloud": {"ca_file": str(ca_file)}},
        )
        began = time.monotonic()
        response = chat(client, server.url)
        took = time.monotonic() - began
    finally:
        tls.stop()
    if trusted:
        assert response.status_code == 200, response.text
        assert response.headers["x-tandem-target"] == "cloud" and len(tls.received) == 1
        return
    assert response.status_code == 503 and took < 2, (response.status_code, took)
    error = response.json()["error"]
    assert "TLS certificate is not trusted" in error["message"] and error["type"], error
    assert tls.received == []


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (b"SSH-2.0-OpenSSH_9.6\r\n", "invalid_answer"),
        (b"HTTP/1.1 999 Odd\r\nContent-Length: 2\r\n\r\n{}", "invalid_answer"),
        (b'HTTP/1.1 200 OK\r\nContent-Length: 500\r\nContent-Type: application/json\r\n\r\n{"id":', "disconnected"),
    ],
    ids=["not-http", "nonsense-status", "cut-body"],
)
async def test_a_broken_answer_over_tls_is_the_same_failure_as_over_plain_http(
    transport: str, answer: bytes, kind: str, authority: tuple[Any, Path]
) -> None:
    broken = ByteUpstream(answer, ssl_context=authority[0])
    upstream = await started(transport, base_url=broken.base_url, ca_file=authority[1], timeouts=TIMEOUTS)
    try:
        with pytest.raises(UpstreamFailure) as failure:
            await upstream.send(BODY, stream=False)
    finally:
        await upstream.close()
        broken.stop()
    assert failure.value.kind == kind, failure.value
    assert broken.requests == 1  # the request crossed TLS; the answer was what broke


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    "answer",
    [
        b'nt":"<<someone-else>>"}}]}\n\nHTTP/1.1 200 OK\r\n\r\n',
        b"HTTP/1.1 2<<someone-else>>\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX-Note: <<someone-else>>\x00\r\nContent-Length: 2\r\n\r\n{}",
        b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\nzz<<someone-else>>\r\n\r\n',
    ],
    ids=["not-a-status-line", "bad-status", "bad-header", "bad-chunk"],
)
async def test_an_answer_refused_as_not_http_is_never_quoted_in_the_error(transport: str, answer: bytes) -> None:
    # Bytes an upstream sends past one answer's end, after the connection was taken for the next
    # request, are read as that request's answer (HTTP/1.1 has no request ids); the error that
    # refuses them goes to that request's client, so it names the kind of error, never the bytes.
    broken = ByteUpstream(answer)
    upstream = await started(transport, base_url=broken.base_url, timeouts=TIMEOUTS)
    said = ""
    try:
        reply = await upstream.send(BODY, stream=True)
        assert reply.stream is not None
        try:
            while await reply.stream.chunks():
                pass
        except TransportError as exc:
            said = str(exc)
        finally:
            reply.stream.close()
    except UpstreamFailure as failure:
        said = f"{failure} {failure.body!r}"
    finally:
        await upstream.close()
        broken.stop()
    assert said, "the broken answer was taken"
    assert "someone-else" not in said, said
    assert "not valid HTTP" in said or "invalid" in said.lower(), said
