"""A lean HTTP/1.1 client for plain-HTTP upstreams (the local vLLM edge, above all).

Every step calls an upstream, and aiohttp's general-purpose client spent a quarter of a short
step's CPU in the gateway (~100 µs: request and response objects, its stream reader, cookie and
redirect handling, payload wrappers) and ~0.3 ms more than a bare client on a 400 KB body
(benchmarks/longrun/README.md). An upstream call needs much less: one origin, POST and GET, a keep-alive
pool of at most `max_connections`, answers framed by Content-Length, chunks or the connection's
end (httptools' parser, the one uvicorn serves with), gzip or deflate answers from servers that
compress though asked not to, read back-pressure, and two errors the caller maps to its failure
kinds: the connection could not be made (`ConnectFailed`), the upstream's bytes are not a valid
answer (`InvalidAnswer`), or it broke (`Http1Error`).

The response offers what `router.upstream` reads of aiohttp's (`status`, `headers.get`,
`content.readany`, `content.iter_any`, `content_length`, `release`, `close`), so one caller
serves both; https upstreams stay on aiohttp (TLS, proxies).
"""

from __future__ import annotations

import asyncio
import base64
import socket
import time
import zlib
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import cast, overload
from urllib.parse import quote, unquote, urlsplit

import httptools

# Awaited once a request is handed to its connection (`Http1Session.post`).
Sent = Callable[[], Awaitable[None]]
# The answer's head (status line and headers) is refused past this: a broken or hostile
# upstream must not grow the gateway's memory with an endless head.
MAX_HEAD_BYTES = 64 * 1024
# Reading pauses while this much of an answer waits unread (a slow client of a stream), and
# resumes below a quarter of it: memory per stream stays bounded whatever the upstream sends.
HIGH_WATER = 256 * 1024
# Bodies up to this size are joined to the head and sent in one write (the copy is cheaper
# than a second send); larger ones go as two.
JOIN_BELOW = 64 * 1024
# A compressed answer is held compressed (bounded like any other) and inflated as it is read,
# at most this much a read: a small bomb never holds more than this of its output in memory, and
# the caller's bound on the answer stops it.
INFLATE_PIECE = 1024 * 1024


class Http1Error(Exception):
    """The connection broke or the upstream's bytes were not a valid HTTP/1.1 answer."""


class InvalidAnswer(Http1Error):
    """The upstream's bytes are not a valid HTTP/1.1 answer (or one past this client's bounds):
    the upstream answered, badly, as opposed to the connection breaking."""


class ConnectFailed(Http1Error):
    """No connection could be made (refused, unreachable, name not found, timed out)."""

    def __init__(self, message: str, os_error: OSError | None = None) -> None:
        super().__init__(message)
        self.os_error = os_error


class Headers:
    """An answer's headers, looked up without regard to case (a repeated name's values joined
    with ", ", as HTTP allows for all but Set-Cookie, which no upstream call reads)."""

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: dict[str, str] = {}

    def add(self, name: str, value: str) -> None:
        key = name.lower()
        held = self._values.get(key)
        self._values[key] = value if held is None else f"{held}, {value}"

    @overload
    def get(self, name: str) -> str | None: ...
    @overload
    def get(self, name: str, default: str) -> str: ...
    def get(self, name: str, default: str | None = None) -> str | None:
        return self._values.get(name.lower(), default)


class _Origin:
    """Where an upstream's base URL points, and the head lines every request to it carries."""

    __slots__ = ("host", "host_line", "port")

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http":
            raise ValueError(f"{base_url!r}: only http:// URLs are served by this client")
        if parts.hostname is None:
            raise ValueError(f"{base_url!r}: no host")
        self.host = parts.hostname
        self.port = parts.port or 80
        shown = f"[{self.host}]" if ":" in self.host else self.host
        host = shown if self.port == 80 else f"{shown}:{self.port}"
        self.host_line = f"Host: {host}\r\n"
        if parts.username is not None or parts.password is not None:
            # A URL's user:password is HTTP Basic authentication, as aiohttp and curl send it.
            pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
            self.host_line += f"Authorization: Basic {base64.b64encode(pair.encode()).decode()}\r\n"


def _path_of(url: str) -> str:
    # Percent-encoded as yarl (aiohttp) does: a space or a non-ASCII letter in a configured
    # path must not break the request line; what is encoded already stays as it is.
    parts = urlsplit(url)
    path = quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
    return f"{path}?{quote(parts.query, safe='/?%:@!$&()*+,;=-._~')}" if parts.query else path


def _checked(text: str) -> str:
    # A CR or LF in a header would let a value (a key read from a file) start a new header.
    if "\r" in text or "\n" in text:
        raise ValueError("a header name or value holds a line break")
    return text


class Content:
    """An answer's body as it arrives."""

    __slots__ = ("_response",)

    def __init__(self, response: Response) -> None:
        self._response = response

    async def readany(self) -> bytes:
        """Whatever has arrived (waiting for some), b"" at the end of the answer."""
        return await self._response.read_some()

    async def iter_any(self) -> AsyncIterator[bytes]:
        while part := await self._response.read_some():
            yield part


class Response:
    """One answer, fed by its connection's parser; read by one task."""

    __slots__ = (
        "_connection",
        "_decoder",
        "_error",
        "_extra",
        "_fed",
        "_head",
        "_head_bytes",
        "_interim",
        "_parser",
        "_parts",
        "_size",
        "_tail",
        "_until_close",
        "_waiter",
        "content_length",
        "done",
        "headers",
        "keep_alive",
        "received",
        "status",
    )

    def __init__(self, connection: _Connection) -> None:
        self._connection: _Connection | None = connection
        # The parser calls back into this object, so each holds the other: the reference is
        # dropped once the answer settles, or every call would leave a cycle for the collector.
        self._parser: httptools.HttpResponseParser | None = httptools.HttpResponseParser(self)
        self.status = 0
        self.headers = Headers()
        self.content_length: int | None = None
        self.keep_alive = False
        self.done = False  # the whole answer has been parsed
        self.received = False  # any byte of the answer has arrived
        self._head: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._head_bytes = 0
        self._interim = False
        self._extra = False
        self._until_close = False
        self._decoder: zlib._Decompress | None = None
        self._tail = b""  # compressed input the decoder has not consumed yet
        self._fed = 0  # bytes fed before the head was complete
        self._parts: deque[bytes] = deque()
        self._size = 0
        self._error: Exception | None = None
        self._waiter: asyncio.Future[None] | None = None

    # The parser's callbacks.

    def on_message_begin(self) -> None:
        if self.done:
            self._extra = True

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.done:
            self._extra = True
            return
        self._head_bytes += len(name) + len(value) + 4
        if self._head_bytes > MAX_HEAD_BYTES:
            raise InvalidAnswer(f"the answer's headers passed {MAX_HEAD_BYTES} bytes")
        self.headers.add(name.decode("latin-1"), value.decode("latin-1"))

    def on_headers_complete(self) -> None:
        if self.done:
            return
        parser = self._parser
        assert parser is not None
        status = parser.get_status_code()
        if 100 <= status < 200:
            # An interim answer (103 Early Hints): the real one follows on the same connection.
            self._interim = True
            self.headers = Headers()
            return
        self.status = status
        self.keep_alive = parser.should_keep_alive()
        declared = self.headers.get("content-length")
        if declared is not None and declared.isdigit():
            self.content_length = int(declared)
        chunked = "chunked" in (self.headers.get("transfer-encoding") or "").lower()
        self._until_close = self.content_length is None and not chunked
        encoding = (self.headers.get("content-encoding") or "identity").strip().lower()
        if encoding in ("gzip", "x-gzip"):
            self._decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._decoder = zlib.decompressobj()
        elif encoding != "identity":
            raise InvalidAnswer(f"the answer's Content-Encoding {encoding!r} is not one this client reads")
        if not self._head.done():
            self._head.set_result(None)

    def on_body(self, body: bytes) -> None:
        if self.done:
            return
        self._append(body)

    def on_message_complete(self) -> None:
        if self._interim:
            self._interim = False
            return
        if self.done:
            return
        self.done = True
        self._wake()

    # The connection's side.

    def feed(self, data: bytes) -> None:
        self.received = True
        try:
            parser = self._parser
            if parser is None:
                return
            parser.feed_data(data)
            if not self._head.done():
                # The parser holds a header's pieces itself until the header ends: count every
                # byte of an unfinished head, or one endless header would grow without bound.
                self._fed += len(data)
                if self._fed > MAX_HEAD_BYTES:
                    raise InvalidAnswer(f"the answer's headers passed {MAX_HEAD_BYTES} bytes")
        except Http1Error as exc:
            self.fail(exc)
            return
        except httptools.HttpParserError as exc:
            if not self.done:
                # A callback's own refusal (a head too long) comes as the parser error's context.
                cause = exc.__cause__ or exc.__context__
                error = (
                    cause
                    if isinstance(cause, Http1Error)
                    else InvalidAnswer(f"the upstream's answer is not valid HTTP/1.1: {exc}")
                )
                self.fail(error)
                return
            self._extra = True  # bytes after a whole answer: the connection is not reusable
        if self.done:
            self._settle(reusable=self.keep_alive and not self._extra)
        elif self._size >= HIGH_WATER and self._connection is not None:
            self._connection.pause()

    def lost(self, exc: Exception | None) -> None:
        """The connection closed under this answer."""
        if self.done:
            return
        if self._head.done() and self._until_close and exc is None:
            # An answer with neither length nor chunks ends with its connection.
            self.on_message_complete()
            self._settle(reusable=False)
            return
        detail = "before answering" if not self._head.done() else "in the middle of the answer"
        self.fail(Http1Error(f"the upstream closed the connection {detail}" + (f": {exc}" if exc else "")))

    def fail(self, error: Exception) -> None:
        if self._error is None and not self.done:
            self._error = error
        if not self._head.done():
            self._head.set_exception(error)
            self._head.exception()  # retrieved: a caller gone already must not leave it unread
        self._settle(reusable=False)
        self._wake()

    # The reader's side.

    @property
    def content(self) -> Content:
        """The body as it arrives (made on each use: a reference kept here would be a cycle)."""
        return Content(self)

    @property
    def buffered(self) -> int:
        """Bytes of the answer that arrived and wait to be read."""
        return self._size

    async def wait_head(self) -> None:
        await self._head

    async def read_some(self) -> bytes:
        if self._decoder is not None:
            return await self._read_inflated(self._decoder)
        return await self._read_raw()

    async def _read_inflated(self, decoder: zlib._Decompress) -> bytes:
        while True:
            if self._tail:
                try:
                    out = decoder.decompress(self._tail, INFLATE_PIECE)
                except zlib.error as exc:
                    self.close()
                    raise InvalidAnswer(f"the upstream's compressed answer is corrupt: {exc}") from exc
                self._tail = decoder.unconsumed_tail
                if out:
                    return out
                continue
            raw = await self._read_raw()
            if not raw:
                return decoder.flush()  # what the decoder held back; b"" once all is out
            self._tail = raw

    async def _read_raw(self) -> bytes:
        while not self._parts:
            if self._error is not None:
                raise self._error
            if self.done:
                return b""
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        data = self._parts.popleft() if len(self._parts) == 1 else b"".join(self._drain())
        self._size -= len(data)
        if self._connection is not None and self._size < HIGH_WATER // 4:
            self._connection.resume()
        return data

    def release(self) -> None:
        """Done with the answer: its connection goes back to the pool once the answer is whole,
        and is dropped if it never will be (unread bytes would poison the next call)."""
        if not self.done:
            self.close()

    def close(self) -> None:
        """Drop the connection (an upstream generating for nobody stops); a whole answer's
        connection is already back in the pool and stays there."""
        if not self.done:
            self._error = self._error or Http1Error("the answer was closed before its end")
            self._settle(reusable=False)
            self._wake()

    # Helpers.

    def _drain(self) -> list[bytes]:
        parts = list(self._parts)
        self._parts.clear()
        return parts

    def _append(self, data: bytes) -> None:
        if data:
            self._parts.append(data)
            self._size += len(data)
            self._wake()

    def _settle(self, reusable: bool) -> None:
        self._parser = None
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.finished(reusable)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class _Connection(asyncio.Protocol):
    """One keep-alive connection; carries one request at a time."""

    __slots__ = ("_paused", "_pool", "closed", "idle_since", "response", "transport")

    def __init__(self, pool: Http1Session) -> None:
        self._pool = pool
        self.transport: asyncio.Transport | None = None
        self.response: Response | None = None
        self.closed = False
        self.idle_since = 0.0
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not subclasses of asyncio's, though they behave as one.
        self.transport = cast(asyncio.Transport, transport)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            # Small writes (a short request) must leave at once, not wait for an ACK.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        response = self.response
        if response is None:
            # Bytes no request asked for: the upstream is out of step; never reuse this.
            self.close()
            return
        response.feed(data)

    def eof_received(self) -> bool:
        # The upstream is closing: not for another request, even before connection_lost.
        self.closed = True
        return False  # close: a half-closed upstream connection is of no further use

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        response, self.response = self.response, None
        if response is not None:
            response.lost(exc)
        self._pool.forget(self)

    def send(self, response: Response, data: bytes, body: bytes) -> None:
        assert self.transport is not None
        self.response = response
        if len(body) < JOIN_BELOW:
            self.transport.write(data + body)
        else:
            self.transport.write(data)
            self.transport.write(body)

    def finished(self, reusable: bool) -> None:
        """The request's answer is over: keep the connection for the next, or drop it."""
        self.response = None
        self.resume()
        if reusable and not self.closed:
            self._pool.give_back(self)
        else:
            self.close()
            self._pool.free_slot()

    def pause(self) -> None:
        if not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()

    def resume(self) -> None:
        if self._paused and self.transport is not None and not self.closed:
            self._paused = False
            self.transport.resume_reading()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            # Abort, not close: close waits to flush what is unsent, and an upstream that stopped
            # reading would keep the socket forever.
            self.transport.abort()


class Http1Session:
    """A pool of keep-alive connections to one origin, at most `max_connections` open."""

    def __init__(self, base_url: str, max_connections: int, connect_timeout: float, keepalive_s: float = 30.0) -> None:
        self._origin = _Origin(base_url)
        self._connect_timeout = connect_timeout
        self._keepalive_s = keepalive_s
        self._slots = asyncio.Semaphore(max_connections)
        self._idle: deque[_Connection] = deque()  # the most recently used last
        self._open: set[_Connection] = set()
        self._heads: dict[tuple[str, str, tuple[tuple[str, str], ...]], bytes] = {}

    async def post(
        self,
        url: str,
        data: bytes,
        headers: dict[str, str],
        allow_redirects: bool = False,
        sent: Sent | None = None,
    ) -> Response:
        """Send; return once the answer's head is here (its body is read from the response).
        A redirect is never followed (`allow_redirects` is aiohttp's argument, taken for the
        caller's sake: it may only be False). `sent` is awaited once, as soon as the request is
        handed to the connection, while the upstream reads it: work the answer does not need
        runs in the time the upstream takes anyway, in the caller's task (a task of its own
        would put the request's write behind every other ready callback of a busy loop)."""
        if allow_redirects:
            raise ValueError("this client does not follow redirects")
        return await self._request("POST", url, data, headers, sent)

    @asynccontextmanager
    async def get(self, url: str, headers: dict[str, str]) -> AsyncIterator[Response]:
        response = await self._request("GET", url, b"", headers, None)
        try:
            yield response
        finally:
            response.release()

    async def close(self) -> None:
        for connection in list(self._open):
            connection.close()
        self._idle.clear()

    # The pool.

    def give_back(self, connection: _Connection) -> None:
        connection.idle_since = time.monotonic()
        self._idle.append(connection)
        self._expire(connection.idle_since)
        self._slots.release()

    def free_slot(self) -> None:
        self._slots.release()

    def forget(self, connection: _Connection) -> None:
        self._open.discard(connection)
        if connection in self._idle:
            self._idle.remove(connection)

    def _expire(self, now: float) -> None:
        # The oldest idle connections sit first: close those idle past the keep-alive (one
        # check a request, so a pool that shrinks in load also shrinks in sockets).
        while self._idle and now - self._idle[0].idle_since > self._keepalive_s:
            self._idle.popleft().close()

    def _take_idle(self) -> _Connection | None:
        # The most recently used first: the freshest, and the rest age out (`_expire`). One
        # the upstream closed meanwhile is known closed; one it closes as it is taken is the
        # stale case `_request` tries again.
        while self._idle:
            connection = self._idle.pop()
            if not connection.closed:
                return connection
        return None

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        origin = self._origin
        try:
            async with asyncio.timeout(self._connect_timeout):
                _, connection = await loop.create_connection(lambda: _Connection(self), origin.host, origin.port)
        except TimeoutError as exc:
            raise ConnectFailed(
                f"no connection to {origin.host}:{origin.port} within {self._connect_timeout:g} s"
            ) from exc
        except OSError as exc:
            raise ConnectFailed(f"cannot connect to {origin.host}:{origin.port}: {exc}", exc) from exc
        self._open.add(connection)
        return connection

    def _head(self, method: str, url: str, headers: dict[str, str]) -> bytes:
        key = (method, url, tuple(headers.items()))
        head = self._heads.get(key)
        if head is None:
            lines = [f"{method} {_checked(_path_of(url))} HTTP/1.1\r\n", self._origin.host_line]
            lines += [f"{_checked(name)}: {_checked(value)}\r\n" for name, value in headers.items()]
            # UTF-8, not Latin-1: a value outside Latin-1 (a key pasted with a typographic
            # quote) goes as its bytes, and the upstream says what it makes of it.
            head = "".join(lines).encode("utf-8")
            if len(self._heads) < 64:  # the callers send a handful of distinct heads
                self._heads[key] = head
        return head

    async def _request(
        self, method: str, url: str, body: bytes, headers: dict[str, str], sent: Sent | None
    ) -> Response:
        head = self._head(method, url, headers) + b"Content-Length: %d\r\n\r\n" % len(body)
        for attempt in range(2):
            await self._slots.acquire()  # held until the answer settles (Response._settle)
            connection = self._take_idle()
            reused = connection is not None
            response: Response | None = None
            try:
                if connection is None:
                    connection = await self._connect()
                response = Response(connection)
                connection.send(response, head, body)
                if sent is not None:
                    # Once, though a stale connection's request goes again: it is the same one.
                    pending = sent
                    sent = None
                    await pending()
                await response.wait_head()
                return response
            except Http1Error:
                if response is None:
                    self._slots.release()  # no connection was made
                    raise
                # One retry, on a fresh connection, when a reused one closed before a byte of
                # the answer came: the upstream dropped it while idle and never read the request.
                if reused and attempt == 0 and not response.received:
                    continue
                raise
            except BaseException:
                # Cancelled (the client left, a timeout): the request may be half sent, so the
                # connection can never carry another.
                if response is None:
                    self._slots.release()
                else:
                    response.close()
                raise
        raise AssertionError("the loop returns or raises")
