"""Commands to the shared store, sent together: what is asked in one turn of the event loop
goes out as one pipeline, and scripts run by their digest with no question first.

Per command, redis-py takes a pooled connection, writes, waits on the socket and parses a reply,
and a pipeline holding a script asks `SCRIPT EXISTS` before it: a step's writes (its record,
its notes, its stitching) cost a round trip and a pool checkout each. Here a command is queued,
and the queue is sent at the next turn of the loop, so the commands that concurrent steps and a
step's own off-path writes issue together share one checkout, one write and one read loop
(auto-pipelining, as ioredis does it). A batch never waits for another: a command issued while
one is in flight goes out in the next turn on its own connection, so a slow reply delays only
its own batch, as before.

Scripts are sent as `EVALSHA`. A Redis that lost its scripts (restarted, failed over to a
replica that never loaded them, `SCRIPT FLUSH`) answers NOSCRIPT: the scripts are loaded
(`SCRIPT LOAD`) and those commands sent again, in their order, in one round trip. That is safe
because a command answered NOSCRIPT did nothing; the batch's other commands ran in their turn.

A command's reply or error goes to its own caller only: a batch is not a transaction, and one
command's error reply fails that command alone. A failure of the connection (an outage) fails
every command of the batch, as it would have failed each of them.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

# What redis-py's hiredis parser answers while a reply is incomplete (None: another layout of
# redis-py, whose own calls the batches then use).
_NOT_ENOUGH_DATA: Any
try:
    from redis._parsers.hiredis import NOT_ENOUGH_DATA as _NOT_ENOUGH_DATA
except ImportError:  # pragma: no cover - redis-py is pinned (constraints.txt)
    _NOT_ENOUGH_DATA = None

_pack_command: Callable[[tuple[Any, ...]], bytes] | None
try:
    # C: a batch's commands packed at a fraction of redis-py's Python packer's cost (the same
    # bytes: str as UTF-8, numbers as `repr`). redis-py's reply parser is hiredis's too when
    # it is installed (a dependency; without it both fall back to Python).
    from hiredis import pack_command as _hiredis_pack

    _pack_command = _hiredis_pack
except ImportError:  # pragma: no cover - hiredis is a dependency; a build without its wheel
    _pack_command = None


@dataclass(frozen=True, slots=True)
class Script:
    """A Lua script the store runs by digest."""

    source: str
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", hashlib.sha1(self.source.encode()).hexdigest())


@dataclass(slots=True)
class _Call:
    args: tuple[Any, ...]
    script: Script | None
    reply: asyncio.Future[Any]


class Batcher:
    """Queues commands of one event loop and sends each turn's as one pipeline."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._queued: list[_Call] = []
        self._sending: set[asyncio.Task[None]] = set()
        # One connection kept from the last batch for the next: redis-py's checkout and return
        # (a condition, a timeout, its health read, its event and metric hooks) cost more CPU
        # than a step's own commands. Kept only while it is sound (`_reusable`); the pool still
        # counts it in use, and a failure or the store going out hands it back.
        self._kept: Any = None

    def command(self, *args: Any) -> asyncio.Future[Any]:
        """Queue a command (`"MGET", key, ...`); its reply, or its error, comes in the future."""
        return self._queue(args, None)

    def script(self, script: Script, keys: list[str], args: list[Any]) -> asyncio.Future[Any]:
        """Queue a run of `script`."""
        return self._queue(("EVALSHA", script.sha, len(keys), *keys, *args), script)

    async def all(self, replies: list[asyncio.Future[Any]]) -> list[Any]:
        """Every reply; once all have come, the first error among them is raised (as a pipeline
        that raises on error does: the others ran)."""
        done = await asyncio.gather(*replies, return_exceptions=True)
        for reply in done:
            if isinstance(reply, BaseException):
                raise reply
        return done

    def _queue(self, args: tuple[Any, ...], script: Script | None) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        call = _Call(args, script, loop.create_future())
        if not self._queued:
            loop.call_soon(self._flush)
        self._queued.append(call)
        return call.reply

    def _flush(self) -> None:
        calls, self._queued = self._queued, []
        if not calls:
            return
        task = asyncio.get_running_loop().create_task(self._send(calls))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _send(self, calls: list[_Call]) -> None:
        try:
            replies = await self._execute(calls)
            missing = [index for index, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
            if missing:
                # The scripts loaded and the commands sent again in one round trip: Redis runs a
                # pipeline in order, so each `SCRIPT LOAD` comes before the commands that need it.
                scripts = {call.script.source for call in (calls[index] for index in missing) if call.script}
                again = await self._execute([calls[index] for index in missing], sorted(scripts))
                for index, reply in zip(missing, again, strict=True):
                    replies[index] = reply
        except Exception as exc:  # an outage, a busy pool: every caller of the batch hears it
            for call in calls:
                if not call.reply.done():
                    call.reply.set_exception(exc)
            return
        except BaseException:  # the sender cancelled (shutdown): so are its callers
            for call in calls:
                call.reply.cancel()
            raise
        for call, reply in zip(calls, replies, strict=True):
            if call.reply.done():
                continue  # its caller gave up (cancelled): the command ran all the same
            if isinstance(reply, Exception):
                call.reply.set_exception(reply)
            else:
                call.reply.set_result(reply)

    async def _execute(self, calls: list[_Call], load: list[str] | None = None) -> list[Any]:
        """The replies to `calls`, in one round trip, after loading the scripts `load`.

        On a pooled connection directly: redis-py's pipeline (and its single command) would add
        per round trip its own bookkeeping (a pipeline object, retry and timing wrappers, reply
        callbacks) that none of these commands needs. A reply Redis answers with an error is
        that command's; a failure to write or read drops the connection (its stream is no longer
        in step) and fails the batch."""
        commands: list[tuple[Any, ...]] = [("SCRIPT", "LOAD", source) for source in load or []]
        commands += [call.args for call in calls]
        pool = self._client.connection_pool
        connection, self._kept = self._kept, None
        if connection is not None and not _reusable(connection, pool):
            # Closed for the pool to reconnect: its own check may take a closed socket for a
            # sound one (redis-py skips it where maintenance notifications are on).
            await connection.disconnect(nowait=True)
            await pool.release(connection)
            connection = None
        if connection is None:
            connection = await pool.get_connection()
        try:
            packed = (
                b"".join([_pack_command(command) for command in commands])
                if _pack_command is not None
                else connection.pack_commands(commands)
            )
            wire = _Wire.of(connection)
            if wire is not None:
                replies = await wire.exchange(packed, len(commands))
            else:
                await connection.send_packed_command(packed, check_health=False)
                replies = []
                for _ in commands:
                    try:
                        replies.append(await connection.read_response())
                    except ResponseError as exc:
                        replies.append(exc)
        except BaseException:
            await connection.disconnect(nowait=True)
            await pool.release(connection)
            raise
        if self._kept is None and pool.max_connections > 1 and _reusable(connection, pool):
            # Every reply read: its stream is in step for the next batch. (A pool of one keeps
            # nothing: the store's own calls outside the batches would wait on it for good.)
            self._kept = connection
        else:
            await pool.release(connection)
        return replies[len(load or []) :]

    async def aclose(self) -> None:
        """Send what is queued and wait for the batches in flight."""
        self._flush()
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)
        kept, self._kept = self._kept, None
        if kept is not None:
            await self._client.connection_pool.release(kept)


class _Wire:
    """A batch's bytes out and its replies in, on a redis-py connection's own stream and reply
    parser (hiredis's), without redis-py's per-call wrappers: its send runs the write in a task
    of its own under `wait_for` (a task and an event-loop turn a batch), its read a timeout
    context and three coroutines per reply. Here the bytes are written at once (the drain is
    awaited only when the transport kept some back) and the replies taken from the parser
    as they come, each socket read under the connection's socket timeout. Only for a connection
    of the shape this was written against (a stream, a hiredis parser); any other goes through
    redis-py's calls. A RESP3 push (a maintenance notification) between the replies is handed to
    the parser's own handler, as its reads hand it."""

    __slots__ = ("_handler", "_more", "_parser", "_push", "_stream", "_timeout", "_writer")

    def __init__(self, connection: Any, parser: Any, more: Any) -> None:
        self._handler = parser  # redis-py's parser: its push handler
        self._parser = parser._reader  # the hiredis reader: feeds and replies, shared with redis-py
        self._push: Any = getattr(parser, "_hiredis_PushNotificationType", None)
        self._stream = connection._reader
        self._writer = connection._writer
        self._timeout: float | None = connection.socket_timeout
        self._more = more  # what the hiredis reader answers while a reply is incomplete

    @classmethod
    def of(cls, connection: Any) -> _Wire | None:
        parser = getattr(connection, "_parser", None)
        if (
            parser is None
            or getattr(parser, "_reader", None) is None
            or getattr(connection, "_reader", None) is None
            or getattr(connection, "_writer", None) is None
            or str(getattr(connection, "protocol", 2) or 2) not in ("2", "3")
            or not getattr(parser, "_connected", False)
            or _NOT_ENOUGH_DATA is None
        ):
            return None
        return cls(connection, parser, _NOT_ENOUGH_DATA)

    async def exchange(self, packed: bytes, count: int) -> list[Any]:
        """Write `packed` and read `count` replies: an error reply in its place (a command's own
        failure), a failure of the connection raised (redis-py's exceptions, as its calls raise)."""
        try:
            self._writer.write(packed)
            if self._writer.transport.get_write_buffer_size() > 0:
                async with asyncio.timeout(self._timeout):
                    await self._writer.drain()
        except TimeoutError:
            raise RedisTimeoutError("Timeout writing to the trajectory store") from None
        except OSError as exc:
            raise RedisConnectionError(f"Error while writing to the trajectory store: {exc}") from exc
        replies: list[Any] = []
        parser, more = self._parser, self._more
        while len(replies) < count:
            reply = parser.gets()
            if reply is more:
                try:
                    async with asyncio.timeout(self._timeout):
                        data = await self._stream.read(65536)
                except TimeoutError:
                    raise RedisTimeoutError("Timeout reading from the trajectory store") from None
                except OSError as exc:
                    raise RedisConnectionError(f"Error while reading from the trajectory store: {exc}") from exc
                if not data:
                    raise RedisConnectionError("The trajectory store closed the connection")
                parser.feed(data)
                continue
            if self._push is not None and isinstance(reply, self._push):
                await self._handler.handle_push_response(reply)
                continue
            if isinstance(reply, RedisConnectionError):
                raise reply  # `LOADING` and the like: the store is not answering commands
            if isinstance(reply, list) and reply and isinstance(reply[0], RedisConnectionError):
                raise reply[0]
            replies.append(reply)
        return replies


def _reusable(connection: Any, pool: Any) -> bool:
    """Whether a connection may carry the next batch without the pool's checks: connected, not
    closed by Redis since (a restart, an idle timeout: the pool would reconnect it), not marked
    for a reconnect, and the store not out (`WaitingPool.out`)."""
    if getattr(pool, "out", False) or not connection.is_connected or connection.should_reconnect():
        return False
    reader = getattr(connection, "_reader", None)
    return reader is not None and not reader.at_eof()
