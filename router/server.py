"""How the gateway is served: uvicorn with httptools, with each request's head and body bounded.

uvicorn's httptools protocol neither limits the size of a request's head nor times a client
that sends it slowly: httptools joins a header's value piece by piece until it ends, so one
endless header makes the server hold (and copy again and again) all of it before any
authentication runs, and a client that dribbles its head holds a connection for ever.
`BoundedHttpToolsProtocol` counts the bytes of each request head before the parser sees them and
answers 431 once they pass `limits.max_header_bytes`; it drops a client whose head is not
complete `limits.header_timeout_s` after its first byte (or after the connection opened), and
one whose body is not complete `limits.body_timeout_s` after its head, with 408; and it closes
the connection of a client that leaves an answer unread `limits.send_timeout_s` once the send
buffer is full (a stream's relay waits on it, its upstream and step held, and no upstream
timeout runs while it waits). Each time it counts `tandem_limit_exceeded_total{limit=…}`.

Request bodies being received hold memory, and each costs the event loop its decoding and
parsing once complete: with no bound across connections, a few dozen clients sending
`max_body_bytes` at once held gigabytes and kept the loop busy long enough for the others to be
timed out as slow. `BodiesInFlight` counts, per worker process, the body bytes received that the
application has not yet taken whole; a body that would take the count past
`limits.max_body_bytes_in_flight` gets 503 with `Retry-After` (a body alone is never refused by
it: `max_body_bytes` bounds that). A body that is late because the gateway did not read it (the
loop was busy, or flow control held the socket) is not blamed on its client: the body timeout is
extended (`_gateway_behind`), up to as long again.

An answer given before its request's body was read (a 413 for a declared length over
`max_body_bytes`, a 401, a 408, a 431) closes the connection of a client that asked for that
(`Connection: close`, HTTP/1.0) with the body still coming: closed at once, the kernel would
answer the bytes left unread with a reset, which can destroy the answer before the client reads
it (a client that sends its whole body before reading never sees it). Such a close lingers
(`_Lingering`): the answer goes out, the write side is shut, and what the client still sends
is read and dropped, for `LINGER_S` and `LINGER_BYTES` at most, before the socket closes.

`server_config` builds the uvicorn config for `tandem serve` and for the tests' gateway server
alike, so that the tests run the server that production runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import re
import select
import signal
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import (
    HEADER_RE,
    HEADER_VALUE_RE,
    STATUS_LINE,
    HttpToolsProtocol,
    RequestResponseCycle,
)
from uvicorn.protocols.utils import get_client_addr, get_path_with_query_string
from uvicorn.server import ServerState
from uvicorn.supervisors import Multiprocess

from router.config.limits import LimitSettings
from router.errors import error_body

log = logging.getLogger("tandem")
OnLimit = Callable[[str], None]


def _uncounted(limit: str) -> None:
    """Until the application is loaded there is no metrics registry to count in."""


def _no_streams(within_s: float) -> int:
    """Until the application is loaded there is no stream to end."""
    return 0


# A request's `Upgrade` header (an HTTP/2 upgrade: `curl --http2` on http://, a WebSocket
# handshake): the gateway serves HTTP/1.1 only, and RFC 9110 lets a server ignore the header.
# httptools would take the bytes after the head as the new protocol's (the body was dropped: a
# chat request answered "body is empty"), and uvicorn would hand a WebSocket handshake to a
# WebSocket library (a POST left unanswered, past every timeout). Renamed, one byte for one,
# before httptools reads the head.
_UPGRADE = re.compile(rb"(?i)(?:^|(?<=\n))upgrade(?=[ \t]*:)")


def without_upgrade(data: bytes, end: int) -> bytes:
    """`data` with the `Upgrade` header of the request head in it (which ends at `end`, or
    past `data` when -1) renamed `X-Upgrd`."""
    head = data if end < 0 else data[: end + 2]
    renamed, count = _UPGRADE.subn(b"x-upgrd", head)
    return renamed + data[len(head) :] if count else data


class BodiesInFlight:
    """Body bytes received and not yet taken whole by the application, across the worker's
    connections, within `limit` (a connection's count is its own; see `take`)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0

    def take(self, held_here: int, size: int) -> bool:
        """Count `size` more bytes of a body of which `held_here` are counted already; False
        (nothing counted) when that would pass the limit while other bodies are held too: a
        body alone always fits, however large (`max_body_bytes` is its bound)."""
        if self.held + size > self.limit and self.held > held_here:
            return False
        self.held += size
        return True

    def give_back(self, size: int) -> None:
        self.held -= size


# Retry-After of a body refused because too many bytes of bodies were in flight: they are
# complete, or refused, within seconds.
BODIES_RETRY_AFTER_S = 1
# A body late for the gateway's sake is checked again this often, for `body_timeout_s` more at most.
_BEHIND_RECHECK_S = 1.0


class BoundedConfig(uvicorn.Config):
    """uvicorn's config with Tandem's `limits`; picklable, since uvicorn hands it to each worker
    process, which loads the application (and so finds its metrics and streams) itself."""

    def __init__(self, app: Any, limits: LimitSettings, **kwargs: Any) -> None:
        # No WebSocket: the gateway serves none, and a handshake must not reach a WebSocket library.
        kwargs.setdefault("ws", "none")
        super().__init__(app, http=BoundedHttpToolsProtocol, **kwargs)
        self.limits = limits
        self.on_limit: OnLimit = _uncounted
        self.bodies = BodiesInFlight(limits.max_body_bytes_in_flight)
        # Ends the gateway's running streams within so many seconds (returns how many run).
        self.end_streams: Callable[[float], int] = _no_streams
        self._shutdown_seen = False
        # Kept-alive connections waiting for their next request, the longest idle first, with
        # the loop time each went idle at; one timer closes those idle `timeout_keep_alive`.
        self.idle: OrderedDict[BoundedHttpToolsProtocol, float] = OrderedDict()
        self._idle_timer: asyncio.TimerHandle | None = None

    def went_idle(self, connection: BoundedHttpToolsProtocol) -> None:
        """`connection` answered and waits for its next request: closed once it has waited
        `timeout_keep_alive` (uvicorn gave each response a timer of its own, created and
        cancelled once a request); past `limits.max_idle_connections` such connections, the
        longest idle are closed (a client opening connections and leaving them open would
        otherwise hold sockets and memory for `keep_alive_s` each)."""
        idle = self.idle
        loop = connection.loop
        idle[connection] = loop.time()
        while len(idle) > self.limits.max_idle_connections:
            oldest, _ = idle.popitem(last=False)
            self.on_limit("max_idle_connections")
            oldest.close_idle()
        if self._idle_timer is None:
            self._idle_timer = loop.call_later(self.timeout_keep_alive, self._close_idle, loop)

    def _close_idle(self, loop: asyncio.AbstractEventLoop) -> None:
        """Close the connections idle `timeout_keep_alive`; set the timer for the next."""
        self._idle_timer = None
        idle = self.idle
        since_at_most = loop.time() - self.timeout_keep_alive
        while idle:
            connection, since = next(iter(idle.items()))
            if since > since_at_most:
                self._idle_timer = loop.call_at(since + self.timeout_keep_alive, self._close_idle, loop)
                return
            idle.popitem(last=False)
            connection.timeout_keep_alive_handler()

    def load(self) -> None:
        super().load()
        engine = _engine_of(self.loaded_app)
        if engine is not None:
            self.on_limit = engine.metrics.limit_hit
            self.end_streams = engine.answers.streams.end_all

    def shutting_down(self) -> None:
        """The server stops (each connection is told so): streams still running just before
        the shutdown timeout are ended by the gateway itself, each with an error event, `[DONE]`
        and its record, rather than cut when the server cancels what still runs."""
        if self._shutdown_seen or self.timeout_graceful_shutdown is None:
            return
        self._shutdown_seen = True
        timeout = float(self.timeout_graceful_shutdown)
        # The margin leaves time to write the end and record the step before the server cuts.
        running = self.end_streams(max(timeout - min(1.0, timeout / 4), 0.0))
        if running:
            log.info("shutting down: %d step(s) running; any left near %g s end with an error", running, timeout)


def _engine_of(app: Any) -> Any:
    """The gateway's engine, found through whatever uvicorn wrapped around the app."""
    while app is not None:
        engine = getattr(getattr(app, "state", None), "engine", None)
        if engine is not None:
            return engine
        app = getattr(app, "app", None)
    return None


# A whole response's head and body go out in one write below this size (a copy of the body),
# in two above it.
JOIN_BELOW = 64 * 1024


class _Holding:
    """A cycle's transport while uvicorn writes a response's head: the head is kept, not sent."""

    __slots__ = ("head", "real")

    def __init__(self, real: asyncio.Transport) -> None:
        self.real = real
        self.head: bytes | None = None

    def write(self, data: bytes) -> None:
        self.head = data

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class _Joining:
    """A cycle's transport while uvicorn writes a body after a kept head: the head goes with the
    first write, or alone before the transport closes."""

    __slots__ = ("head", "real")

    def __init__(self, real: asyncio.Transport, head: bytes) -> None:
        self.real = real
        self.head: bytes | None = head

    def write(self, data: bytes) -> None:
        head, self.head = self.head, None
        if head is None:
            self.real.write(data)
        elif len(data) < JOIN_BELOW:
            self.real.write(head + data)
        else:
            self.real.write(head)
            self.real.write(data)

    def flush(self) -> None:
        head, self.head = self.head, None
        if head is not None:
            self.real.write(head)

    def close(self) -> None:
        self.flush()
        self.real.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class JoinedCycle(RequestResponseCycle):
    """uvicorn's request cycle, writing a whole response's head and body in one write.

    uvicorn writes a response's head when the application sends `http.response.start` and its
    body with the next message: two writes, two system calls, for an answer that the gateway
    hands over whole (a chat completion, an error). Here uvicorn builds and checks the head as
    ever, but a head with a `Content-Length` is kept until the body comes and sent with it. A
    chunked response's head (a stream's) is sent at once, as is a HEAD request's (no body follows)."""

    _kept: bytes | None = None
    _until_close = False  # an HTTP/1.0 client's stream: its body ends where the connection does
    # Called once the application has taken the body whole (or learnt the client left): its
    # bytes no longer count as bodies in flight (`BodiesInFlight`).
    body_taken: Callable[[], None] | None = None

    async def receive(self) -> Any:
        message = await super().receive()
        if self.body_taken is not None and not message.get("more_body", False):
            self.body_taken()
            self.body_taken = None
        return message

    async def send(self, message: Any) -> None:
        real = self.transport
        if self._until_close:
            await self._send_until_close(message)
            return
        kept = self._kept
        if kept is not None:
            self._kept = None
            joining = _Joining(real, kept)
            self.transport = joining  # type: ignore[assignment]
            try:
                await super().send(message)
            finally:
                self.transport = real
                if not self.disconnected:
                    joining.flush()
            return
        if self.response_started or message.get("type") != "http.response.start" or self.scope["method"] == "HEAD":
            await super().send(message)
            return
        holding = _Holding(real)
        self.transport = holding  # type: ignore[assignment]
        try:
            await super().send(message)
        finally:
            self.transport = real
        head = holding.head
        if head is not None:
            if self.chunked_encoding and self.scope["http_version"] == "1.0":
                # HTTP/1.0 has no chunked coding (RFC 9112 §6.1): a stream's body is sent as it
                # comes and ends with the connection, which the head says it closes.
                self._until_close, self.chunked_encoding, self.keep_alive = True, False, False
                head = head.replace(b"transfer-encoding: chunked\r\n", b"")
                if b"connection: close\r\n" not in head:
                    head = head[:-2] + b"connection: close\r\n\r\n"
                real.write(head)
            elif self.chunked_encoding:
                real.write(head)
            else:
                self._kept = head

    async def _send_until_close(self, message: Any) -> None:
        """A body message of a response whose end is the connection's."""
        if self.flow.write_paused and not self.disconnected:
            await self.flow.drain()
        if self.disconnected or self.response_complete:
            return
        body = message.get("body", b"")
        if body:
            self.transport.write(body)
        if not message.get("more_body", False):
            self.response_complete = True
            self.message_event.set()
            self.transport.close()
            self.on_response()

    async def send_whole(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        """A whole response: `http.response.start` with `headers` (lower-case names, a
        `content-length` of `body`'s, no `connection` or `transfer-encoding`), then `body` as
        its one `http.response.body`. What goes out, and the cycle's state after, are what `send`
        makes of the two messages; without them, the head kept aside and written with the
        body, and the checks of a response's progress that a whole one cannot fail (the chat
        path's answer: a tenth of the server's and app's work around a step)."""
        scope = self.scope
        if self.response_started or scope["method"] == "HEAD":
            await self.send({"type": "http.response.start", "status": status, "headers": headers})
            await self.send({"type": "http.response.body", "body": body})
            return
        if self.flow.write_paused and not self.disconnected:
            await self.flow.drain()
        if self.disconnected:
            return
        self.response_started = True
        self.waiting_for_100_continue = False
        if self.access_log:
            # uvicorn's access line, as `send` writes it.
            path = get_path_with_query_string(scope)
            message = '%s - "%s %s HTTP/%s" %d'
            self.access_logger.info(
                message, get_client_addr(scope), scope["method"], path, scope["http_version"], status
            )
        content = [STATUS_LINE[status]]
        for name, value in self.default_headers:
            content += [name, b": ", value, b"\r\n"]
        for name, value in headers:
            # uvicorn's checks: a value may hold what a client wrote (a session's name).
            if HEADER_RE.search(name):
                raise RuntimeError("Invalid HTTP header name.")
            if HEADER_VALUE_RE.search(value):
                raise RuntimeError("Invalid HTTP header value.")
            content += [name, b": ", value, b"\r\n"]
        if not self.keep_alive:
            content.append(b"connection: close\r\n")
        content.append(b"\r\n")
        self.chunked_encoding = False
        self.expected_content_length = 0
        transport = self.transport
        if len(body) < JOIN_BELOW:
            content.append(body)
            transport.write(b"".join(content))
        else:
            transport.write(b"".join(content))
            transport.write(body)
        self.response_complete = True
        self.message_event.set()
        if not self.keep_alive:
            transport.close()
        self.on_response()


# A close that lingers (a client still sending a body its answer did not wait for) drops what
# comes for so long and so many bytes at most, then closes the socket whatever still comes.
LINGER_S = 5.0
LINGER_BYTES = 64 * 1024 * 1024


class _Lingering(asyncio.Transport):
    """A connection's transport as uvicorn, its request cycles and the application hold it;
    its `close` lingers while the request being read has bytes still to come
    (`BoundedHttpToolsProtocol.linger`). Everything else is the socket's transport's."""

    def __init__(self, real: asyncio.Transport, protocol: BoundedHttpToolsProtocol) -> None:
        super().__init__()
        self.real = real
        self._protocol = protocol
        self.lingering = False
        # The socket's own write: the one method called for every answer, without a hop.
        self.write = real.write  # type: ignore[method-assign]

    def close(self) -> None:
        if self.lingering:
            return  # the linger's own timer or the client's end closes it
        if not self.real.is_closing() and self._protocol.input_pending():
            self.lingering = True
            self.write = _dropped  # type: ignore[method-assign]
            self._protocol.linger(self.real)
            return
        self.real.close()

    def is_closing(self) -> bool:
        return self.lingering or self.real.is_closing()

    def abort(self) -> None:
        self.real.abort()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.real.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self.real.pause_reading()

    def resume_reading(self) -> None:
        self.real.resume_reading()

    def is_reading(self) -> bool:
        return self.real.is_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self.real.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self) -> int:
        return self.real.get_write_buffer_size()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.real.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self.real.get_protocol()


def _dropped(data: bytes | bytearray | memoryview) -> None:
    """A write after the connection began to close: nothing more goes out."""


class _Idle(asyncio.TimerHandle):
    """What a connection's `timeout_keep_alive_task` holds while it is idle (uvicorn cancels it
    when the connection is used again): the server's idle timer times it, nothing to cancel."""

    def __init__(self) -> None:
        pass

    def cancel(self) -> None:
        pass


_IDLE = _Idle()


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a bounded, timed request head and a timed body."""

    def __init__(
        self,
        config: uvicorn.Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        assert isinstance(config, BoundedConfig), "BoundedHttpToolsProtocol needs a BoundedConfig"
        self._config = config
        self._limits = config.limits
        self._on_limit = config.on_limit
        self._in_head = True  # between the end of one request and the end of the next one's head
        self._head_bytes = 0
        self._body_pending = False  # the head is complete, the body is not
        self._head_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._send_timer: asyncio.TimerHandle | None = None  # while the send buffer is full
        self._linger_timer: asyncio.TimerHandle | None = None  # while a close lingers
        self._lingered = 0  # bytes dropped while the close lingers
        self._refused = False
        self._bodies = config.bodies
        self._body_held = 0  # bytes of this connection's body counted in `_bodies`
        self._body_extended_s = 0.0  # time the body timeout was extended for the gateway's sake
        # Steps watching for their client to leave (router/api/disconnect.py): cycle -> callback.
        self._watchers: dict[object, Callable[[], None]] = {}

    def watch_disconnect(self, cycle: object, on_left: Callable[[], None]) -> None:
        """Call `on_left` if the connection is lost before `cycle`'s response is complete: a
        callback from `connection_lost`, so that watching a step costs no task of its own."""
        if getattr(cycle, "disconnected", False):
            on_left()
            return
        self._watchers[cycle] = on_left

    def unwatch_disconnect(self, cycle: object) -> None:
        self._watchers.pop(cycle, None)

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        # Before its task first runs, so that the application is handed the joining `send`.
        cycle.__class__ = JoinedCycle
        assert isinstance(cycle, JoinedCycle)
        cycle.body_taken = self._give_back_body
        super()._start_asgi_task(cycle, app)

    def shutdown(self) -> None:
        self._config.shutting_down()
        if self._linger_timer is not None:
            self._end_linger()  # the server stops: no client's body is waited for
            return
        super().shutdown()

    # -- idle keep-alive connections -----------------------------------------------------------

    def on_response_complete(self) -> None:
        # uvicorn's, but a connection left idle is timed by the server's one idle timer
        # (`BoundedConfig.went_idle`), not by a timer of its own.
        self._give_back_body()  # answered without taking its body whole (a 401, a 413)
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self._unset_keepalive_if_required()
        self.flow.resume_reading()
        if self.pipeline:
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
        else:
            self.timeout_keep_alive_task = _IDLE
            self._config.went_idle(self)

    def _unset_keepalive_if_required(self) -> None:
        # uvicorn calls it whenever a connection stops being idle: bytes came, it answered, it closed.
        super()._unset_keepalive_if_required()
        self._config.idle.pop(self, None)

    def close_idle(self) -> None:
        """Closed by the cap on idle connections (`BoundedConfig.went_idle`)."""
        self._unset_keepalive_if_required()
        if not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_Lingering(transport, self))
        # A client that connects and sends nothing is timed like one that sends its head slowly.
        self._head_timer = self.loop.call_later(self._limits.header_timeout_s, self._head_too_slow)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timers()
        self._give_back_body()
        super().connection_lost(exc)
        watchers, self._watchers = self._watchers, {}
        for cycle, on_left in watchers.items():
            # uvicorn marks only its newest cycle; a watched one still answering lost its client too.
            if not getattr(cycle, "response_complete", True):
                on_left()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            if self._linger_timer is not None:
                self._lingered += len(data)
                if self._lingered > LINGER_BYTES:
                    self._end_linger()
            return
        if self._in_head:
            # The head only: a body's words ("pip install --upgrade") are not searched, and a
            # chunk of body is not copied.
            end = data.find(b"\r\n\r\n")
            if data.find(b"pgrade", 0, len(data) if end < 0 else end) >= 0:
                data = without_upgrade(data, end)
        if self._in_head:
            room = self._limits.max_header_bytes - self._head_bytes
            if len(data) > room:
                # Feed no more than the limit allows: past it, the head is refused unread.
                limit = self._head_bytes = self._limits.max_header_bytes
                if room > 0:
                    super().data_received(data[:room])
                if self.transport.is_closing():
                    return
                if self._in_head and self._head_bytes == limit:
                    self._refuse_head()
                    return
                # The head ended within the limit: the rest is its body, or (its message complete,
                # which set the count back to 0) a pipelined request's head, counted from here.
                self.data_received(data[room:])
                return
            self._head_bytes += len(data)
        super().data_received(data)
        self._arm_timers()

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._body_pending = True
        self._body_extended_s = 0.0
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if self._refused:
            return  # the rest of a read after a refusal: no request takes it
        if self.cycle.response_complete:
            return  # answered already (a 401): uvicorn drops the rest of the body, uncounted
        # Counted as it comes, not by its Content-Length: a client that declares a large body
        # and sends it slowly holds no more of the bound than it has sent.
        if not self._bodies.take(self._body_held, len(body)):
            self._bodies_full()
            return
        self._body_held += len(body)
        super().on_body(body)

    def _give_back_body(self) -> None:
        if self._body_held:
            self._bodies.give_back(self._body_held)
            self._body_held = 0

    def _bodies_full(self) -> None:
        self._on_limit("max_body_bytes_in_flight")
        message = (
            f"the gateway is receiving other request bodies of {self._bodies.held} bytes in all, at its limit of "
            f"{self._bodies.limit} bytes (limits.max_body_bytes_in_flight); retry in {BODIES_RETRY_AFTER_S} s"
        )
        self._refuse_body(503, message, "bodies_in_flight_full", retry_after_s=BODIES_RETRY_AFTER_S)

    def on_message_complete(self) -> None:
        if self._refused:
            return
        super().on_message_complete()
        self._body_pending = False
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None
        self._in_head = True
        self._head_bytes = 0

    # -- timers ------------------------------------------------------------------------------
    # Armed only while a head or body is incomplete after a read, so that a request that comes
    # whole in one read (nearly all of them) never creates a timer.

    def _arm_timers(self) -> None:
        if self._in_head and self._head_bytes and self._head_timer is None:
            self._head_timer = self.loop.call_later(self._limits.header_timeout_s, self._head_too_slow)
        if self._body_pending and self._body_timer is None:
            self._body_timer = self.loop.call_later(self._limits.body_timeout_s, self._body_too_slow)

    def _cancel_timers(self) -> None:
        for timer in (self._head_timer, self._body_timer, self._send_timer, self._linger_timer):
            if timer is not None:
                timer.cancel()
        self._head_timer = self._body_timer = self._send_timer = self._linger_timer = None

    def pause_writing(self) -> None:
        # The client reads slower than the answer comes (or not at all): a write waits for it.
        super().pause_writing()
        if self._send_timer is None:
            self._send_timer = self.loop.call_later(self._limits.send_timeout_s, self._send_too_slow)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def _send_too_slow(self) -> None:
        self._send_timer = None
        if self.transport.is_closing():
            return
        self._on_limit("send_timeout_s")
        log.warning(
            "a client left its answer unread for %g s (limits.send_timeout_s): its connection is closed",
            self._limits.send_timeout_s,
        )
        # Aborted, not closed: a close would wait to write what the client does not read. The
        # lost connection ends the step as a client that left.
        self.transport.abort()

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or not self._in_head:
            return
        self._on_limit("header_timeout_s")
        if not self._head_bytes and not self._response_in_flight():
            # Nothing of a request arrived: there is nobody to answer, only a socket to free.
            self._refused = True
            self.transport.close()
            return
        message = f"request headers not complete within {self._limits.header_timeout_s:g} s (limits.header_timeout_s)"
        self._refuse(408, message, "request_timeout")

    def _body_too_slow(self) -> None:
        self._body_timer = None
        if self.transport.is_closing() or not self._body_pending:
            return
        if self._body_extended_s < self._limits.body_timeout_s and self._gateway_behind():
            # Not the client's delay: looked at again shortly, for as long again at most (a
            # client dribbling its body cannot count on the race of a byte with this check).
            step = min(_BEHIND_RECHECK_S, self._limits.body_timeout_s)
            self._body_extended_s += step
            self._body_timer = self.loop.call_later(step, self._body_too_slow)
            return
        self._on_limit("body_timeout_s")
        message = f"request body not complete within {self._limits.body_timeout_s:g} s (limits.body_timeout_s)"
        self._refuse_body(408, message, "request_timeout")

    def _gateway_behind(self) -> bool:
        """Whether the body is late for the gateway's sake: reading is paused until the
        application takes what came (flow control), or bytes wait unread in the socket (the
        event loop was busy elsewhere when they came)."""
        if self.flow.read_paused:
            return True
        sock = self.transport.get_extra_info("socket")
        if sock is None:
            return False
        try:
            readable, _, _ = select.select([sock], [], [], 0)
        except (OSError, ValueError):
            return False
        return bool(readable)

    # -- closing with a request still coming -------------------------------------------------

    def input_pending(self) -> bool:
        """Whether the request being read has bytes still to come: a head begun and not
        ended, or a body not complete (an answer given before it was read)."""
        return self._body_pending or (self._in_head and self._head_bytes > 0)

    def linger(self, real: asyncio.Transport) -> None:
        """Close once the client has read its answer: what is written goes out, then the write
        side is shut (the client reads the answer's end), and what the client still sends is
        dropped unparsed until it closes its side, `LINGER_S` pass or `LINGER_BYTES` come."""
        self._refused = True
        for timer in (self._head_timer, self._body_timer):
            if timer is not None:
                timer.cancel()
        self._head_timer = self._body_timer = None
        self._linger_timer = self.loop.call_later(LINGER_S, self._end_linger)
        if real.can_write_eof():
            real.write_eof()
        real.resume_reading()  # read (and drop) what flow control held in the socket

    def _end_linger(self) -> None:
        if self._linger_timer is not None:
            self._linger_timer.cancel()
            self._linger_timer = None
        transport = self.transport
        (transport.real if isinstance(transport, _Lingering) else transport).close()

    # -- refusing ----------------------------------------------------------------------------

    def _refuse_body(self, status: int, message: str, code: str, retry_after_s: int | None = None) -> None:
        """Stop reading the body of the request being read, and answer `status` instead: its
        handler, waiting for the body, sees the client leave."""
        cycle = self.cycle
        self._refused = True
        self._give_back_body()
        if cycle.response_started:
            # The application answered without waiting for the body (a 413, say): stop here.
            if cycle.response_complete:
                self.transport.close()
            else:
                self._close_after_response()
            return
        cycle.disconnected = True
        cycle.message_event.set()
        self._write_error(status, message, code, retry_after_s)

    def _refuse_head(self) -> None:
        self._on_limit("max_header_bytes")
        limit = self._limits.max_header_bytes
        message = f"request line and headers are over the limit of {limit} bytes (limits.max_header_bytes)"
        self._refuse(431, message, "request_headers_too_large")

    def _refuse(self, status: int, message: str, code: str) -> None:
        """Answer a request whose head cannot be read, and close; what else comes is dropped."""
        self._refused = True
        if self._response_in_flight():
            # A pipelined head behind a response still going out: no room for an answer.
            self._close_after_response()
            return
        self._write_error(status, message, code)

    def send_400_response(self, msg: str) -> None:
        """Bytes httptools cannot parse as HTTP/1.1 (uvicorn answers them in plain text): an
        OpenAI-shaped 400, and the connection closed (after a response still going out)."""
        message = (
            "the request is not valid HTTP/1.1: its request line, headers or body framing "
            "(Content-Length, Transfer-Encoding) could not be parsed"
        )
        if self._body_pending and self.cycle is not None:
            self._refuse_body(400, message, "invalid_http_request")  # a broken chunk, say
        else:
            self._refuse(400, message, "invalid_http_request")

    def eof_received(self) -> bool | None:  # type: ignore[override]  # asyncio reads the value: True keeps the transport open
        """The client ended its side of the connection. With a request still coming (its body
        cut short), it is answered with a 400 before the connection closes (uvicorn closed it
        with no word). Otherwise the connection closes as uvicorn closes it: a client that left
        mid-step is told from one that only half-closed by nothing but this end, and its step
        must stop (router/api/disconnect.py)."""
        if self._refused or self.transport.is_closing():
            return None
        if self._body_pending and self.cycle is not None and not self.cycle.response_started:
            message = "the request body ended before its declared length: the client closed its side of the connection"
            self._refuse_body(400, message, "incomplete_request")
            return True
        if self._in_head and self._head_bytes and not self._response_in_flight():
            self._refuse(400, "the request ended before its headers did", "incomplete_request")
            return True
        return None

    def _response_in_flight(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _close_after_response(self) -> None:
        self.cycle.keep_alive = False
        self.flow.pause_reading()

    def _write_error(self, status: int, message: str, code: str, retry_after_s: int | None = None) -> None:
        # A 503 is the gateway's state, not the client's mistake (OpenAI's type for it).
        kind = "server_error" if status >= 500 else "invalid_request_error"
        body = error_body(message, kind, code)
        head = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            head += [name, b": ", value, b"\r\n"]
        if retry_after_s is not None:
            head.append(b"retry-after: %d\r\n" % retry_after_s)
        head += [
            b"content-type: application/json\r\n",
            b"content-length: %d\r\n" % len(body),
            b"connection: close\r\n\r\n",
        ]
        self.transport.write(b"".join(head) + body)
        self.transport.close()


def server_config(app: Any, limits: LimitSettings, **options: Any) -> BoundedConfig:
    """The uvicorn config Tandem is served with; `app` is an ASGI app or an import string of a
    factory. `options` are uvicorn's (host, port, workers, loop, log_level…)."""
    options.setdefault("loop", "uvloop")
    options.setdefault("access_log", False)
    # Tandem reads no client address; parsing forwarded headers cost every request.
    options.setdefault("proxy_headers", False)
    return BoundedConfig(app, limits, **options)


def logging_config(level: str) -> dict[str, Any]:
    """uvicorn's logging, and the gateway's own loggers (`tandem`, `tandem.store`, …) at `level`
    through the same handler: without a handler of theirs only warnings reached stderr (Python's
    last resort, with no level or name), and `log_level: info` showed none of their info lines.
    (`tandem serve`'s: a process that embeds the app keeps its own logging.)"""
    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    config["formatters"]["tandem"] = {
        "()": "uvicorn.logging.DefaultFormatter",
        "fmt": "%(levelprefix)s %(name)s: %(message)s",
    }
    config["handlers"]["tandem"] = {
        "formatter": "tandem",
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
    }
    config["loggers"]["tandem"] = {"handlers": ["tandem"], "level": level.upper()}
    return config


class SingleServer(uvicorn.Server):
    """The server of `tandem serve` with one worker. uvicorn handles SIGINT and SIGTERM only, so
    SIGHUP (a closed terminal, or an operator's `kill -HUP` meant as a reload) killed the process
    at once: streams cut mid-answer and their steps never recorded. Here SIGHUP stops it as
    SIGTERM does (in-flight steps finish and are recorded, `server.shutdown_timeout_s` at most);
    with several workers uvicorn's supervisor takes SIGHUP to restart them, reading the config
    again."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGHUP"):
            with super().capture_signals():
                yield
            return
        before = signal.signal(signal.SIGHUP, self.hang_up)
        try:
            with super().capture_signals():
                yield
        finally:
            signal.signal(signal.SIGHUP, before)

    def hang_up(self, sig: int, frame: FrameType | None) -> None:
        if not self.should_exit:
            log.warning(
                "received SIGHUP: stopping once the steps in flight end (one worker does not reload "
                "its config; restart it, or run server.workers > 1, where SIGHUP restarts the workers)"
            )
        self.should_exit = True


def _start_resource_tracker_deaf_to_hang_up() -> None:
    """Start multiprocessing's resource tracker (a helper of the spawned workers) ignoring
    SIGHUP, which it inherits: a SIGHUP to the process group, which the supervisor takes as a
    restart of the workers, killed it ("resource_tracker: process died unexpectedly")."""
    if not hasattr(signal, "SIGHUP"):
        return
    from multiprocessing import resource_tracker

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        resource_tracker.ensure_running()
    finally:
        signal.signal(signal.SIGHUP, before)


def serve(config: BoundedConfig) -> bool:
    """Run the server in this process, or in `config.workers` worker processes (as `uvicorn.run`
    does); False when a single server failed to start."""
    if config.workers > 1:
        _start_resource_tracker_deaf_to_hang_up()
        Multiprocess(config, sockets=[config.bind_socket()]).run()
        return True
    server = SingleServer(config)
    server.run()
    return server.started
