"""One keep-alive connection of the HTTP/1.1 client, and when it may carry another request.

HTTP/1.1 has no request ids: the bytes that follow a request on a connection are taken as its
answer. So a connection carries a second request only when nothing of an earlier exchange can
still arrive on it: after a clean, complete answer (`Response.reusable`) and, when it is taken
from the pool, only if the socket is still quiet (`has_pending_input`: no byte waiting, no end
of stream). Bytes that arrive while it sits idle close it at once. Anything else closes it.
"""

from __future__ import annotations

import asyncio
import select
import socket
from typing import Protocol, cast

# Bodies up to this size are joined to the head and sent in one write (the copy is cheaper
# than a second send); larger ones go as two.
JOIN_BELOW = 64 * 1024


def has_pending_input(fileno: int) -> bool:
    """Whether the socket has bytes to read or its peer's end of stream waiting (or an error):
    any of them means an idle connection is not clean. One poll(2) with no wait (~1 µs); poll,
    not select, so that descriptors past FD_SETSIZE work."""
    poller = select.poll()
    poller.register(fileno, select.POLLIN | select.POLLPRI)
    return bool(poller.poll(0))


class Response(Protocol):
    """What a connection hands the answer it is receiving (router/transport/http1/response.py's
    `Response`, which drives the connection)."""

    received: bool

    def feed(self, data: bytes) -> None: ...
    def started_early(self) -> None: ...
    def lost(self, exc: Exception | None) -> None: ...


class Pool(Protocol):
    """What a connection tells its pool."""

    def give_back(self, connection: Connection) -> None: ...
    def free_slot(self) -> None: ...
    def forget(self, connection: Connection) -> None: ...


class Connection(asyncio.Protocol):
    """One keep-alive connection; carries one request at a time."""

    __slots__ = ("_fileno", "_paused", "_pool", "closed", "idle_since", "response", "transport")

    def __init__(self, pool: Pool) -> None:
        self._pool = pool
        self.transport: asyncio.Transport | None = None
        self.response: Response | None = None
        self.closed = False
        self.idle_since = 0.0
        self._paused = False
        self._fileno = -1

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not subclasses of asyncio's, though they behave as one.
        self.transport = cast(asyncio.Transport, transport)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            # Small writes (a short request) must leave at once, not wait for an ACK.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._fileno = sock.fileno()

    def data_received(self, data: bytes) -> None:
        response = self.response
        if response is None:
            # Bytes no request asked for: the upstream is out of step; never reuse this.
            self.close()
            return
        if not response.received and self.transport is not None and self.transport.get_write_buffer_size():
            # An answer before the request was all written: the upstream did not read it all.
            response.started_early()
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

    def quiet(self) -> bool:
        """Whether this idle connection may carry a request: open, and nothing on its socket
        (a byte there would be read as the next request's answer; an end of stream means the
        upstream is closing it)."""
        transport = self.transport
        if self.closed or transport is None or transport.is_closing():
            return False
        return self._fileno < 0 or not has_pending_input(self._fileno)

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
