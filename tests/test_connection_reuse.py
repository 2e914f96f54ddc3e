"""When a pooled upstream connection may carry another request, for both transports (the lean
HTTP/1.1 client and aiohttp as the gateway configures it), against a real TCP server on
127.0.0.1 whose bytes each test scripts: only after a clean, complete answer, and only if its
socket is still quiet when it is taken from the pool. Each case is one the bytes of an answer
would otherwise reach the next request (tests/transport_suite fuzzes the same at random)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from router.config.upstream import Timeouts
from router.transport import Request as TRequest
from router.transport import Response, Transport, TransportError
from router.transport.http1 import Http1Session
from tests import test_http1
from tests.test_http1 import ByteServer, Request, Script, answer, raw
from tests.transport_suite.transports import TRANSPORTS, made

# The scripted byte server of the HTTP/1.1 client's tests, one a test.
server = test_http1.server
LEFTOVER = b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nleftover"


async def body_of(response: Response) -> bytes:
    parts = []
    while part := await response.read_some():
        parts.append(part)
    response.release()
    return b"".join(parts)


async def post(session: Transport, server: ByteServer, body: bytes = b"{}") -> Response:
    return await session.send(TRequest("POST", server.url, {"Content-Type": "application/json"}, body))


@pytest.fixture(params=TRANSPORTS)
async def session(request: pytest.FixtureRequest, server: ByteServer) -> AsyncIterator[Transport]:
    base_url = f"http://127.0.0.1:{server.port}/v1"
    transport = made(request.param, base_url=base_url, max_connections=4, timeouts=Timeouts(connect=2))
    yield transport
    await transport.close()


async def test_a_connection_with_bytes_waiting_is_not_taken_from_the_pool(
    server: ByteServer, session: Transport
) -> None:
    writers: list[asyncio.StreamWriter] = []

    async def one_then_hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: Request) -> bool:
        writers.append(writer)
        return await answer(b"one")(reader, writer, request)

    server.scripts = [one_then_hold, answer(b"two")]
    assert await body_of(await post(session, server)) == b"one"
    await asyncio.sleep(0.05)  # idle in the pool
    # An answer nobody asked for reaches the idle connection's socket; the loop is held (a
    # busy gateway) so that nothing reads it before the next request takes a connection.
    writers[0].write(LEFTOVER)
    time.sleep(0.05)  # noqa: ASYNC251 (the point: the loop is held, as a busy one is)
    assert await body_of(await post(session, server)) == b"two"
    assert server.connections == 2


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\nContent-Length: %d\r\n\r\n" % len(LEFTOVER),
        b"HTTP/1.1 304 Not Modified\r\nContent-Length: %d\r\n\r\n" % len(LEFTOVER),
    ],
    ids=["204", "204-with-length", "304-with-length"],
)
async def test_after_an_answer_without_a_body_the_connection_is_not_reused(
    server: ByteServer, session: Transport, head: bytes
) -> None:
    # A server that sends the body of a 204 (or the length a 304 declares) after its head, a
    # little later: by then the next request is on the wire, and would read it as its answer.
    async def late_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: Request) -> bool:
        writer.write(head)
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(LEFTOVER)
        return True

    server.scripts = [late_body, answer(b"two")]
    first = await post(session, server)
    assert first.status in (204, 304) and await body_of(first) == b""
    assert await body_of(await post(session, server)) == b"two"
    assert server.connections == 2


@pytest.mark.parametrize(
    "bytes_",
    [
        b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\none",
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\none",
    ],
    ids=["http-1.0", "connection-close"],
)
async def test_an_answer_that_does_not_keep_its_connection_ends_it(
    server: ByteServer, session: Transport, bytes_: bytes
) -> None:
    server.scripts = [raw(bytes_, LEFTOVER, keep=True, pause=0.05), answer(b"two")]
    assert await body_of(await post(session, server)) == b"one"
    assert await body_of(await post(session, server)) == b"two"
    assert server.connections == 2


@pytest.mark.parametrize(
    ("bytes_", "message"),
    [
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n" + LEFTOVER, "switched"),
        (b"HTTP/1.1 100 Continue\r\nContent-Length: 8\r\n\r\n" + LEFTOVER, "interim answer"),
    ],
    ids=["101", "100-with-length"],
)
async def test_an_odd_interim_answer_is_refused(server: ByteServer, bytes_: bytes, message: str) -> None:
    server.scripts = [raw(bytes_, keep=True), answer(b"two")]
    session = Http1Session(f"http://127.0.0.1:{server.port}/v1", 4, connect_timeout=2.0)
    with pytest.raises(TransportError, match=message):
        await post(session, server)
    assert await body_of(await post(session, server)) == b"two"
    assert server.connections == 2
    await session.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_answer_before_the_request_was_written_ends_its_connection(transport: str) -> None:
    # The upstream answers after the head, while a body larger than the sockets' buffers is
    # still being written; it reads the body afterwards. What it made of the body is unknown:
    # the connection carries nothing more.
    connections = 0

    async def early(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                text = b"early" if length > 1_000_000 else b"two"
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(text), text))
                await writer.drain()
                await reader.readexactly(length)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    listening = await asyncio.start_server(early, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    session = made(transport, base_url=f"http://127.0.0.1:{port}/v1", timeouts=Timeouts(connect=2))
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    response = await session.send(TRequest("POST", url, {}, b"x" * 32 * 1024 * 1024))
    assert await body_of(response) == b"early"
    assert await body_of(await session.send(TRequest("POST", url, {}, b"{}"))) == b"two"
    assert connections == 2
    await session.close()
    listening.close()


async def test_a_kept_connection_the_upstream_closed_goes_again_once_on_a_fresh_one(
    server: ByteServer, session: Transport
) -> None:
    # The upstream drops the kept connection when the next request comes, with no byte of an
    # answer: it never answered that request, which goes again on a new connection.
    server.scripts = [answer(b"one"), raw(), answer(b"two")]
    assert await body_of(await post(session, server)) == b"one"
    assert await body_of(await post(session, server)) == b"two"
    assert server.connections == 2
    assert [request.connection for request in server.requests] == [1, 1, 2]


@pytest.mark.parametrize(
    "second",
    [raw(b"HTTP/1.1 200 OK\r\nContent-"), raw(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhal")],
    ids=["part-of-a-head", "part-of-a-body"],
)
async def test_a_request_answered_in_part_never_goes_again(
    server: ByteServer, session: Transport, second: Script
) -> None:
    server.scripts = [answer(b"one"), second, answer(b"again")]
    assert await body_of(await post(session, server)) == b"one"
    with pytest.raises(TransportError):
        await body_of(await post(session, server))
    assert len(server.requests) == 2


async def test_a_fresh_connection_closed_before_an_answer_is_not_tried_again(
    server: ByteServer, session: Transport
) -> None:
    server.scripts = [raw(), answer(b"again")]
    with pytest.raises(TransportError):
        await post(session, server)
    assert len(server.requests) == 1


async def test_a_chunk_size_that_is_not_a_number_fails_the_body_at_once(server: ByteServer, session: Transport) -> None:
    # The first chunk's end and the broken size come in one read while the body's reader waits:
    # the chunk's end wakes it with no data, and the error must still reach it (not its timeout).
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello"
    server.scripts = [raw(head, b"\r\nzz7\r\nworld!!\r\n0\r\n\r\n", pause=0.05, keep=True)]
    started = time.perf_counter()
    response = await post(session, server)
    with pytest.raises(TransportError):
        await asyncio.wait_for(body_of(response), 5)
    assert time.perf_counter() - started < 2
