"""A connection to the shared store that its batches own (router/trajectory/redis_batch.py): each
batch's bytes are written at once and its replies read in the socket's own callback, in order,
with no task, stream or timeout context a round trip.

Read through redis-py's stream, a round trip cost a task for the batch, a waiter and a wake-up
for each read, a timeout context (a timer made and cancelled) and the checks of a connection
taken from and handed back to the pool: ~30 µs of CPU against ~16 µs here, and a step makes
three. The connection is made by redis-py (its address, TLS, credentials, `HELLO`, `SELECT`),
then its socket's protocol becomes this one: redis-py's hiredis reader parses the replies as
before, so they are the replies its own calls would give (error replies as its exceptions,
RESP3 as it reads it). Batches written while others wait for their replies are pipelined: Redis
answers in order. The socket timeout holds as before: a pipe that waits for a reply and hears
nothing for that long fails its batches with redis-py's TimeoutError and closes (its stream is
out of step), and so does a pipe whose socket closes or errs, with its ConnectionError.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

# What redis-py's hiredis reader answers while a reply is incomplete (None: another layout of
# redis-py, whose own calls the batches then use).
_MORE: Any
try:
    from redis._parsers.hiredis import NOT_ENOUGH_DATA as _MORE
except ImportError:  # pragma: no cover - redis-py is pinned (constraints.txt)
    _MORE = None


class Written:
    """A batch written on a pipe: how many replies it waits for, and what hears them (`done`:
    the replies, or the exception that failed the pipe)."""

    __slots__ = ("count", "replies")

    def __init__(self, count: int) -> None:
        self.count = count
        self.replies: list[Any] = []

    def done(self, result: list[Any] | BaseException) -> None:
        raise NotImplementedError


def _connection_error(reply: Any) -> RedisConnectionError | None:
    # `LOADING` and the like: the store is not answering commands (redis-py raises these).
    kind = type(reply)
    if kind is str or kind is int:  # most replies: told at once
        return None
    if isinstance(reply, RedisConnectionError):
        return reply
    if kind is list and reply and isinstance(reply[0], RedisConnectionError):
        return reply[0]
    return None


class Pipe(asyncio.Protocol):
    """A redis-py connection's socket, taken over for the batches (`take`)."""

    def __init__(
        self,
        connection: Any,
        parser: Any,
        transport: asyncio.Transport,
        on_idle: Callable[[Pipe], None],
        on_lost: Callable[[Pipe], None],
    ) -> None:
        self.connection = connection
        self._parser = parser  # redis-py's: its push handler
        self._reader = parser._reader  # the hiredis reader
        self._push: Any = getattr(parser, "_hiredis_PushNotificationType", None)
        self._transport = transport
        self._loop = asyncio.get_running_loop()
        self._timeout: float | None = connection.socket_timeout
        self._on_idle = on_idle
        self._on_lost = on_lost
        self.waiting: deque[Written] = deque()
        self.lost = False
        self._last = 0.0  # loop time of the last write or read
        self._timer: asyncio.TimerHandle | None = None
        self._pushes: set[asyncio.Task[Any]] = set()

    @classmethod
    def take(cls, connection: Any, on_idle: Callable[[Pipe], None], on_lost: Callable[[Pipe], None]) -> Pipe | None:
        """The connection's socket as a pipe, when the connection is of the shape this was written
        against (a stream over a transport, a hiredis reader) and nothing is left unread on it;
        else None (the caller uses redis-py's calls)."""
        parser = getattr(connection, "_parser", None)
        stream = getattr(connection, "_reader", None)
        writer = getattr(connection, "_writer", None)
        reader = getattr(parser, "_reader", None)
        unread = getattr(stream, "_buffer", None)
        if (
            _MORE is None
            or reader is None
            or not getattr(parser, "_connected", False)
            or stream is None
            or writer is None
            or unread is None
            or len(unread) > 0
            or stream.at_eof()
            or reader.has_data()
        ):
            return None
        transport = writer.transport
        if transport.is_closing():
            return None
        pipe = cls(connection, parser, transport, on_idle, on_lost)
        try:
            transport.set_protocol(pipe)
        except Exception:  # a transport that cannot hand its reads over: redis-py's calls then
            return None
        return pipe

    @property
    def sound(self) -> bool:
        """Whether the pipe may carry another batch."""
        return not self.lost and not self._transport.is_closing()

    def send(self, packed: bytes, written: Written) -> None:
        """Write a batch; its replies (or the pipe's failure) go to `written.done`."""
        self.waiting.append(written)
        try:
            self._transport.write(packed)
        except Exception as exc:  # a socket that failed between two batches
            self.fail(RedisConnectionError(f"Error while writing to the trajectory store: {exc}"))
            return
        self._last = self._loop.time()
        if self._timer is None and self._timeout is not None:
            self._timer = self._loop.call_at(self._last + self._timeout, self._check)

    def data_received(self, data: bytes) -> None:
        self._last = self._loop.time()
        reader, waiting = self._reader, self.waiting
        reader.feed(data)
        answered = False  # a batch got its last reply: the pipe may have become idle
        while True:
            reply = reader.gets()
            if reply is _MORE:
                break
            if self._push is not None and isinstance(reply, self._push):
                self._pushed(reply)
                continue
            error = _connection_error(reply)
            if error is None and not waiting:
                error = RedisConnectionError("the trajectory store sent a reply no batch asked for")
            if error is not None:
                self.fail(error)
                return
            written = waiting[0]
            written.replies.append(reply)
            if len(written.replies) == written.count:
                waiting.popleft()
                written.done(written.replies)
                answered = True
        if answered and not waiting and not self.lost:
            self._on_idle(self)

    def eof_received(self) -> bool:
        return False  # the transport closes: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        detail = f": {exc}" if exc is not None else ""
        self.fail(RedisConnectionError(f"The trajectory store closed the connection{detail}"))

    def _check(self) -> None:
        """The socket timeout: a pipe waiting for replies that heard nothing for that long fails."""
        self._timer = None
        if not self.waiting or self.lost or self._timeout is None:
            return
        due = self._last + self._timeout
        if self._loop.time() >= due:
            self.fail(RedisTimeoutError("Timeout reading from the trajectory store"))
            return
        self._timer = self._loop.call_at(due, self._check)

    def fail(self, exc: BaseException) -> None:
        """Fail every batch waiting here with `exc` and close the pipe (its stream is out of step)."""
        if self.lost:
            return
        self.lost = True
        waiting, self.waiting = self.waiting, deque()
        first = True
        for written in waiting:
            # Each batch its own exception (one raised in several callers' tasks mixes tracebacks).
            written.done(exc if first else type(exc)(*exc.args))
            first = False
        self._transport.close()
        self._on_lost(self)

    def close(self) -> None:
        """Close an idle pipe (its connection goes back to the pool closed, to be made again)."""
        self.fail(RedisConnectionError("the pipe was closed"))

    def _pushed(self, reply: Any) -> None:
        # A RESP3 push (a maintenance notification) between replies: to redis-py's handler, as
        # its own reads hand it.
        task = self._loop.create_task(self._parser.handle_push_response(reply))
        self._pushes.add(task)
        task.add_done_callback(self._pushes.discard)
