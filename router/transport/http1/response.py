"""One answer of the HTTP/1.1 client: fed by its connection's parser, read by one task.

Besides parsing, an answer gives its connection's reuse verdict when it settles: reusable only
after a clean, complete answer that leaves nothing unread behind it (see `Response.reusable`).
"""

from __future__ import annotations

import asyncio
import zlib
from collections import deque
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, overload

import httptools

from router.protocol.numbers import whole_number
from router.transport.errors import InvalidAnswer, TransportError

if TYPE_CHECKING:
    from router.transport.http1.connection import Connection

# The answer's head (status line and headers) is refused past this: a broken or hostile
# upstream must not grow the gateway's memory with an endless head.
MAX_HEAD_BYTES = 64 * 1024
# Reading pauses while this much of an answer waits unread (a slow client of a stream), and
# resumes below a quarter of it: memory per stream stays bounded whatever the upstream sends
# (this, plus one read of the socket, at most 256 KB).
HIGH_WATER = 64 * 1024
# A read hands out at most this much: what a relay holds while its client is slow to take it.
READ_PIECE = 64 * 1024
# A compressed answer is held compressed (bounded like any other) and inflated as it is read,
# at most this much a read: a small bomb never holds more than this of its output in memory, and
# the caller's bound on the answer stops it.
INFLATE_PIECE = 1024 * 1024
# Answers that never carry a body, whatever their headers say: bytes sent after one (a length it
# declares, a body) would be read as the next request's answer, so their connection is not reused.
BODILESS = frozenset({204, 304})


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
        "_early",
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

    def __init__(self, connection: Connection) -> None:
        self._connection: Connection | None = connection
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
        self._extra = False  # bytes came after the whole answer
        self._early = False  # the answer began before the request was all written
        self._until_close = False
        self._decoder: zlib._Decompress | None = None
        self._tail = b""  # compressed input the decoder has not consumed yet
        self._fed = 0  # bytes fed before the head was complete
        self._parts: deque[bytes | memoryview] = deque()
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
            # One that switches protocols (no request asks to) or says it has a body (none
            # has) leaves bytes the parser would take for the real answer: refused.
            if status == 101:
                raise InvalidAnswer("the upstream switched protocols (HTTP 101), which no request asked for")
            if self.headers.get("content-length") is not None or self.headers.get("transfer-encoding") is not None:
                raise InvalidAnswer(f"the upstream's interim answer (HTTP {status}) declares a body")
            self._interim = True
            self.headers = Headers()
            return
        self.status = status
        self.keep_alive = parser.should_keep_alive()
        declared = whole_number(self.headers.get("content-length"))
        if declared is not None:
            self.content_length = declared
        # Chunked framing only when "chunked" is the last coding, as the parser reads it.
        codings = (self.headers.get("transfer-encoding") or "").lower().split(",")
        chunked = codings[-1].strip() == "chunked"
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
        except TransportError as exc:
            self.fail(exc)
            return
        except (httptools.HttpParserError, httptools.HttpParserUpgrade) as exc:
            if not self.done:
                # A callback's own refusal (a head too long) comes as the parser error's context.
                cause = exc.__cause__ or exc.__context__
                error = (
                    cause
                    if isinstance(cause, TransportError)
                    else InvalidAnswer(f"the upstream's answer is not valid HTTP/1.1: {exc}")
                )
                self.fail(error)
                return
            self._extra = True  # bytes after a whole answer: the connection is not reusable
        if self.done:
            self._settle(reusable=self.reusable)
        elif self._size >= HIGH_WATER and self._connection is not None:
            self._connection.pause()

    def started_early(self) -> None:
        """The answer's first bytes came while the request was still being written: the
        upstream answered without reading it all, and what it does with the rest is unknown."""
        self._early = True

    @property
    def reusable(self) -> bool:
        """Whether the connection may carry another request after this answer: only after a
        whole, clean answer, kept alive (no `Connection: close`, not HTTP/1.0 without keep-alive),
        with no byte after its end, begun after the request was all written, and of a status
        that may have a body (204 and 304 never do, so any bytes after them are unaccounted)."""
        return (
            self.done
            and self._error is None
            and self.keep_alive
            and not self._extra
            and not self._early
            and self.status not in BODILESS
        )

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
        self.fail(TransportError(f"the upstream closed the connection {detail}" + (f": {exc}" if exc else "")))

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
        parts = self._parts
        whole = len(parts) == 1 and len(parts[0]) <= READ_PIECE  # the common case: no join, no cut
        data = bytes(parts.popleft()) if whole else self._take(READ_PIECE)
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
            self._error = self._error or TransportError("the answer was closed before its end")
            self._settle(reusable=False)
            self._wake()

    # Helpers.

    def _take(self, most: int) -> bytes:
        """Up to `most` bytes from the front; the rest of a part cut stays as a view (no copy)."""
        parts = self._parts
        taken: list[bytes | memoryview] = []
        size = 0
        while parts and size < most:
            part = parts.popleft()
            room = most - size
            if len(part) > room:
                view = memoryview(part)
                parts.appendleft(view[room:])
                part = view[:room]
            taken.append(part)
            size += len(part)
        return b"".join(taken)

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
