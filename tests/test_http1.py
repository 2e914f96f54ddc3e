"""The lean HTTP/1.1 client (router/transport/http1/) against a real TCP server on 127.0.0.1 whose
answers are scripted bytes: framings, compression, broken and hostile answers, the pool's
bound, reuse, the stale keep-alive retry, cancellation and read back-pressure."""

from __future__ import annotations

import asyncio
import base64
import gc
import gzip
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from router.transport import ConnectFailed, TransportError
from router.transport.http1 import HIGH_WATER, INFLATE_PIECE, MAX_HEAD_BYTES, Http1Session, Response

# What a script gets: the connection's two ends, and the request as received (head and body).
Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter, "Request"], Awaitable[bool]]  # True: keep it


@dataclass
class Request:
    connection: int  # which accepted connection carried it, from 1
    head: bytes
    body: bytes

    def header(self, name: str) -> str | None:
        for line in self.head.decode("latin-1").split("\r\n")[1:]:
            key, _, value = line.partition(":")
            if key.strip().lower() == name.lower():
                return value.strip()
        return None


@dataclass
class ByteServer:
    scripts: list[Script] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    connections: int = 0
    open_now: int = 0
    most_open: int = 0
    closed_by_client: int = 0
    client_left: asyncio.Event = field(default_factory=asyncio.Event)
    all_closed: asyncio.Event = field(default_factory=asyncio.Event)  # set when none is open
    port: int = 0
    _server: asyncio.Server | None = None

    async def start(self) -> ByteServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/chat/completions"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        self.open_now += 1
        self.all_closed.clear()
        self.most_open = max(self.most_open, self.open_now)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    self.closed_by_client += 1
                    self.client_left.set()
                    return
                request = Request(number, head, b"")
                length = request.header("content-length")
                request.body = await reader.readexactly(int(length)) if length else b""
                self.requests.append(request)
                script = self.scripts.pop(0) if self.scripts else answer(b'{"ok":true}')
                if not await script(reader, writer, request):
                    return
        finally:
            self.open_now -= 1
            if not self.open_now:
                self.all_closed.set()
            writer.close()

    async def close(self) -> None:
        assert self._server is not None
        self._server.close()


def answer(body: bytes, status: str = "200 OK", headers: str = "", delay: float = 0.0) -> Script:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: Request) -> bool:
        if delay:
            await asyncio.sleep(delay)
        writer.write(f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n{headers}\r\n".encode() + body)
        await writer.drain()
        return True

    return script


def raw(*parts: bytes, keep: bool = False, pause: float = 0.0) -> Script:
    """Send `parts` as given (a pause between them), then keep or close the connection."""

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: Request) -> bool:
        for part in parts:
            writer.write(part)
            await writer.drain()
            if pause:
                await asyncio.sleep(pause)
        return keep

    return script


async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: Request) -> bool:
    await reader.read()  # no answer, until the client goes
    return False


async def read_all(response: Response) -> bytes:
    return b"".join([part async for part in response.content.iter_any()])


async def refused_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (one just closed)."""
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port: int = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    return port


@pytest.fixture
async def server() -> AsyncIterator[ByteServer]:
    server = await ByteServer().start()
    yield server
    await server.close()


def session_for(server: ByteServer, max_connections: int = 8, base: str | None = None) -> Http1Session:
    return Http1Session(base or f"http://127.0.0.1:{server.port}/v1", max_connections, connect_timeout=2.0)


async def test_a_sized_answer_is_read_and_its_connection_reused(server: ByteServer) -> None:
    server.scripts = [answer(b'{"a":1}', headers="X-Thing: one\r\n"), answer(b'{"b":2}')]
    session = session_for(server)
    body = b'{"model":"m","messages":[]}'
    first = await session.post(server.url, data=body, headers={"Content-Type": "application/json"})
    assert (first.status, first.content_length) == (200, 7)
    assert first.headers.get("x-THING") == "one" and first.headers.get("missing", "d") == "d"
    assert await read_all(first) == b'{"a":1}'
    first.release()
    second = await session.post(server.url, data=body, headers={"Content-Type": "application/json"})
    assert await read_all(second) == b'{"b":2}'
    assert server.connections == 1  # kept alive
    sent = server.requests[0]
    assert sent.head.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert sent.header("host") == f"127.0.0.1:{server.port}"
    assert sent.header("content-type") == "application/json"
    assert sent.body == body
    await session.close()


async def test_a_large_body_goes_whole(server: ByteServer) -> None:
    session = session_for(server)
    body = b'{"x":"' + b"y" * 700_000 + b'"}'
    response = await session.post(server.url, data=body, headers={})
    await read_all(response)
    assert server.requests[0].body == body
    await session.close()


async def test_a_chunked_answer_arrives_in_pieces(server: ByteServer) -> None:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\n\r\n"
    server.scripts = [
        raw(head, b"5\r\nhello\r\n", b"6\r\n world\r\n", b"0\r\n\r\n", keep=True, pause=0.02),
        answer(b"next"),
    ]
    session = session_for(server)
    response = await session.post(server.url, data=b"{}", headers={})
    assert response.content_length is None
    pieces = [part async for part in response.content.iter_any()]
    assert b"".join(pieces) == b"hello world" and len(pieces) >= 2  # as they came, not at the end
    again = await session.post(server.url, data=b"{}", headers={})
    assert await read_all(again) == b"next" and server.connections == 1
    await session.close()


async def test_an_answer_without_length_ends_with_its_connection(server: ByteServer) -> None:
    server.scripts = [raw(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n", b'{"whole":', b"true}")]
    session = session_for(server)
    response = await session.post(server.url, data=b"{}", headers={})
    assert await read_all(response) == b'{"whole":true}'
    await read_all(await session.post(server.url, data=b"{}", headers={}))
    assert server.connections == 2  # that connection could not carry another request
    await session.close()


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_compressed_answer_is_inflated(server: ByteServer, encoding: str) -> None:
    plain = b'{"text":"' + b"abc" * 50_000 + b'"}'
    packed = gzip.compress(plain) if encoding == "gzip" else zlib.compress(plain)
    server.scripts = [answer(packed, headers=f"Content-Encoding: {encoding}\r\n")]
    session = session_for(server)
    response = await session.post(server.url, data=b"{}", headers={"Accept-Encoding": "identity"})
    assert await read_all(response) == plain
    assert server.requests[0].header("accept-encoding") == "identity"
    await session.close()


async def test_a_compressed_bomb_is_inflated_a_piece_a_read(server: ByteServer) -> None:
    # 200 MB of zeros in ~200 KB: each read holds at most one piece of the output, so a caller
    # that stops at its bound never holds the whole.
    packed = gzip.compress(bytes(200 * 1024 * 1024), compresslevel=9)
    server.scripts = [answer(packed, headers="Content-Encoding: gzip\r\n")]
    session = session_for(server)
    response = await session.post(server.url, data=b"{}", headers={})
    sizes = []
    async for part in response.content.iter_any():
        sizes.append(len(part))
        if sum(sizes) > 8 * 1024 * 1024:
            break
    response.close()
    assert max(sizes) <= INFLATE_PIECE and response.buffered <= len(packed)
    await session.close()


async def test_a_corrupt_compressed_answer_fails_the_read(server: ByteServer) -> None:
    server.scripts = [answer(b"\x1f\x8b\x08\x00garbage-not-gzip", headers="Content-Encoding: gzip\r\n")]
    session = session_for(server)
    response = await session.post(server.url, data=b"{}", headers={})
    with pytest.raises(TransportError, match="compressed answer is corrupt"):
        await read_all(response)
    await session.close()


async def test_an_endless_header_is_cut_at_the_bound(server: ByteServer) -> None:
    # One header that never ends, sent in many small writes: the parser would hold it whole.
    server.scripts = [raw(b"HTTP/1.1 200 OK\r\nX-Endless: ", *[b"v" * 8192] * 64, keep=True)]
    session = session_for(server)
    with pytest.raises(TransportError, match="headers passed"):
        async with asyncio.timeout(5):
            await session.post(server.url, data=b"{}", headers={})
    await session.close()


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (answer(b"{}", headers="Content-Encoding: br\r\n"), "Content-Encoding 'br'"),
        (raw(b"HELLO THERE\r\n\r\n"), "not valid HTTP/1.1"),
        (raw(b"HTTP/1.1 200 OK\r\n" + b"X-Big: " + b"a" * (MAX_HEAD_BYTES + 10) + b"\r\n\r\n"), "headers passed"),
        (raw(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n"), "closed the connection before answering"),
        (raw(b""), "closed the connection before answering"),
    ],
    ids=["unknown-encoding", "garbage", "head-too-long", "cut-in-head", "closed-at-once"],
)
async def test_a_broken_answer_is_an_error_not_a_hang(server: ByteServer, script: Script, message: str) -> None:
    server.scripts = [script]
    session = session_for(server)
    with pytest.raises(TransportError, match=message):
        async with asyncio.timeout(5):
            await session.post(server.url, data=b"{}", headers={})
    # The pool is whole afterwards: the next call is answered.
    assert await read_all(await session.post(server.url, data=b"{}", headers={})) == b'{"ok":true}'
    await session.close()


async def test_a_body_cut_short_fails_the_read(server: ByteServer) -> None:
    server.scripts = [raw(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", b"0123456789", pause=0.02)]
    session = session_for(server)
    response = await session.post(server.url, data=b"{}", headers={})
    with pytest.raises(TransportError, match="in the middle of the answer"):
        await read_all(response)
    await session.close()


async def test_bytes_after_a_whole_answer_keep_the_connection_out_of_the_pool(server: ByteServer) -> None:
    server.scripts = [raw(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n", keep=True)]
    session = session_for(server)
    assert await read_all(await session.post(server.url, data=b"{}", headers={})) == b"ok"
    await read_all(await session.post(server.url, data=b"{}", headers={}))
    assert server.connections == 2
    await session.close()


async def test_an_interim_answer_is_skipped(server: ByteServer) -> None:
    server.scripts = [
        raw(
            b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
            keep=True,
        )
    ]
    session = session_for(server)
    response = await session.post(server.url, data=b"{}", headers={})
    assert response.status == 200 and response.headers.get("link") is None
    assert await read_all(response) == b"ok"
    await session.close()


async def test_an_idle_connection_the_upstream_dropped_is_retried_once_on_a_new_one(server: ByteServer) -> None:
    # The second request reaches a connection the upstream closes without answering (as one
    # closing an idle keep-alive connection does): it goes again, on a fresh connection.
    server.scripts = [answer(b"one"), raw(), answer(b"two")]
    session = session_for(server)
    assert await read_all(await session.post(server.url, data=b"{}", headers={})) == b"one"
    assert await read_all(await session.post(server.url, data=b"{}", headers={})) == b"two"
    assert server.connections == 2 and len(server.requests) == 3
    # On a fresh connection the same close is the upstream's failure: no second try.
    server.scripts = [raw(), raw()]
    fresh = session_for(server)
    with pytest.raises(TransportError, match="before answering"):
        await fresh.post(server.url, data=b"{}", headers={})
    assert len(server.requests) == 4
    await session.close()
    await fresh.close()


async def test_a_kept_alive_connection_closed_after_the_upstream_began_is_not_sent_again(server: ByteServer) -> None:
    # The upstream read the request on a kept-alive connection and closed it a while later
    # with no answer (a crash while it generates): sending the request again would run, and
    # bill, the prompt twice with nothing to show it. The failure is the caller's.
    async def close_later(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: Request) -> bool:
        await asyncio.sleep(0.3)
        return False

    server.scripts = [answer(b"one"), close_later, answer(b"never")]
    session = session_for(server)
    assert await read_all(await session.post(server.url, data=b"{}", headers={})) == b"one"
    with pytest.raises(TransportError, match="before answering"):
        await session.post(server.url, data=b"{}", headers={})
    assert len(server.requests) == 2  # sent once
    await session.close()


async def test_a_refused_connection_is_a_connect_failure() -> None:
    port = await refused_port()
    session = Http1Session(f"http://127.0.0.1:{port}/v1", 4, connect_timeout=2.0)
    with pytest.raises(ConnectFailed) as failure:
        await session.post(f"http://127.0.0.1:{port}/v1/chat/completions", data=b"{}", headers={})
    assert isinstance(failure.value.os_error, ConnectionRefusedError)
    # The slot taken for it was given back: with one connection allowed, a retry is not stuck.
    one = Http1Session(f"http://127.0.0.1:{port}/v1", 1, connect_timeout=2.0)
    for _ in range(3):
        with pytest.raises(ConnectFailed):
            async with asyncio.timeout(2):
                await one.post(f"http://127.0.0.1:{port}/v1/x", data=b"", headers={})


async def test_cancelling_a_call_drops_its_connection_and_frees_its_slot(server: ByteServer) -> None:
    server.scripts = [hang]
    session = session_for(server, max_connections=1)
    call = asyncio.create_task(session.post(server.url, data=b"{}", headers={}))
    await asyncio.sleep(0.1)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    async with asyncio.timeout(2):
        assert await read_all(await session.post(server.url, data=b"{}", headers={})) == b'{"ok":true}'
    assert server.connections == 2  # the hung one was not reused
    await session.close()


async def test_closing_an_unread_answer_drops_the_connection(server: ByteServer) -> None:
    server.scripts = [raw(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", b"partial", keep=True)]
    session = session_for(server)
    response = await session.post(server.url, data=b"{}", headers={})
    response.close()
    with pytest.raises(TransportError, match="closed before its end"):
        await read_all(response)
    async with asyncio.timeout(2):
        await server.client_left.wait()  # the server read the connection's end
    await session.close()


async def test_the_pool_never_opens_more_than_its_bound(server: ByteServer) -> None:
    server.scripts = [answer(b"x", delay=0.05) for _ in range(12)]
    session = session_for(server, max_connections=3)
    responses = await asyncio.gather(*[session.post(server.url, data=b"{}", headers={}) for _ in range(12)])
    assert [await read_all(r) for r in responses] == [b"x"] * 12
    assert server.most_open <= 3 and server.connections <= 3
    await session.close()


async def test_reading_pauses_while_an_answer_waits_unread(server: ByteServer) -> None:
    size = 16 * 1024 * 1024
    server.scripts = [raw(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size, b"z" * size, keep=True)]
    session = session_for(server)
    response = await session.post(server.url, data=b"{}", headers={})
    await asyncio.sleep(0.3)  # the upstream sends as fast as it can; nobody reads
    # Held: up to the high-water mark and what the socket delivered with the last read.
    assert response.buffered <= HIGH_WATER + 1024 * 1024
    assert len(await read_all(response)) == size
    await session.close()


async def test_a_url_with_credentials_sends_basic_authentication(server: ByteServer) -> None:
    session = session_for(server, base=f"http://us%40er:p%3Ass@127.0.0.1:{server.port}/v1")
    await read_all(await session.post(server.url, data=b"{}", headers={}))
    assert server.requests[0].header("authorization") == "Basic " + base64.b64encode(b"us@er:p:ss").decode()
    await session.close()


async def test_a_header_with_a_line_break_is_refused(server: ByteServer) -> None:
    session = session_for(server)
    with pytest.raises(ValueError, match="line break"):
        await session.post(server.url, data=b"{}", headers={"Authorization": "Bearer k\r\nX-Evil: 1"})
    assert server.requests == []
    await session.close()


def test_only_http_and_https_urls_are_taken() -> None:
    with pytest.raises(ValueError, match="only http:// and https://"):
        Http1Session("ftp://files.example.com/v1", 4, 1.0)


async def test_calls_leave_no_cyclic_garbage(server: ByteServer) -> None:
    # Each call's objects are freed by reference counting alone: garbage the cyclic collector
    # must find costs every process a pause that grows with its heap.
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    session = session_for(server)
    await read_all(await session.post(server.url, data=b"{}", headers={}))  # the pool's connection made
    server.scripts = [
        answer(b'{"a":1}'),
        raw(head, b"2\r\nok\r\n0\r\n\r\n", keep=True),
        answer(b"{}", status="500 Oops"),
    ]
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(3):
            response = await session.post(server.url, data=b"{}", headers={"Content-Type": "application/json"})
            await read_all(response)
            response.release()
            del response
        gc.collect()
        left = [
            type(o).__name__
            for o in gc.garbage
            if type(o).__module__.startswith("router.transport.http1") or "Parser" in type(o).__name__
        ]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []
    await session.close()


async def test_a_path_is_percent_encoded_once(server: ByteServer) -> None:
    session = session_for(server)
    base = f"http://127.0.0.1:{server.port}"
    for url in (f"{base}/v1/chat completions", f"{base}/v1/chat%20completions?x=a b"):
        await read_all(await session.post(url, data=b"{}", headers={}))
    lines = [request.head.split(b"\r\n")[0] for request in server.requests]
    assert lines == [b"POST /v1/chat%20completions HTTP/1.1", b"POST /v1/chat%20completions?x=a%20b HTTP/1.1"]
    await session.close()


async def test_work_given_with_a_request_runs_once_it_is_on_the_wire(server: ByteServer) -> None:
    # `sent` runs in the caller's task while the upstream reads the request: the server has
    # the whole request by the time the work yields, and the answer is read after it.
    server.scripts = [answer(b"one", delay=0.05), raw(), answer(b"two")]
    session = session_for(server)
    seen: list[int] = []

    async def work() -> None:
        await asyncio.sleep(0.02)
        seen.append(len(server.requests))

    assert await read_all(await session.post(server.url, data=b"{}", headers={}, sent=work)) == b"one"
    assert seen == [1]
    # Written to the idle connection, which the upstream drops, then again on a fresh one:
    # the work ran once, after the first write.
    assert await read_all(await session.post(server.url, data=b"{}", headers={}, sent=work)) == b"two"
    assert seen == [1, 2] and len(server.requests) == 3 and server.connections == 2
    await session.close()


async def test_work_that_fails_gives_the_request_up(server: ByteServer) -> None:
    server.scripts = [hang]
    session = session_for(server, max_connections=1)

    async def broken() -> None:
        raise RuntimeError("broken")

    with pytest.raises(RuntimeError, match="broken"):
        await session.post(server.url, data=b"{}", headers={}, sent=broken)
    async with asyncio.timeout(2):
        await server.all_closed.wait()  # the connection was dropped, not left waiting
        # and its slot freed: the one connection allowed serves the next call
        assert await read_all(await session.post(server.url, data=b"{}", headers={})) == b'{"ok":true}'
    await session.close()


async def test_no_connection_no_work() -> None:
    port = await refused_port()
    session = Http1Session(f"http://127.0.0.1:{port}/v1", 4, connect_timeout=2.0)
    ran: list[bool] = []

    async def work() -> None:
        ran.append(True)

    with pytest.raises(ConnectFailed):
        await session.post(f"http://127.0.0.1:{port}/v1/chat/completions", data=b"{}", headers={}, sent=work)
    assert ran == []
