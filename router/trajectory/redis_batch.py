"""Commands to the shared store, sent together: what is asked in one turn of the event loop
goes out as one pipeline, and scripts run by their digest with no question first.

Per command, redis-py takes a pooled connection, writes, waits on the socket and parses a reply,
and a pipeline holding a script asks `SCRIPT EXISTS` before it: a step's writes (its record,
its notes, its stitching) cost a round trip and a pool checkout each. Here a command is queued,
and the queue is sent at the next turn of the loop, so the commands that concurrent steps and a
step's own off-path writes issue together share one checkout, one write and one read loop
(auto-pipelining, as ioredis does it). A batch never waits for another: a command issued while
one is in flight goes out in the next turn on its own connection, so a slow reply delays only
its own batch, as before. The connections are the batches' own (redis_pipe.py): written and
read in the socket's callbacks, kept from one batch to the next.

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

from router.trajectory.redis_pipe import Pipe, Written

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
        # Batches waiting for a connection, or on redis-py's own calls (a connection of another
        # shape, a pool of one).
        self._sending: set[asyncio.Task[None]] = set()
        # The connections the batches own (redis_pipe.py), and those of them with no batch in
        # flight, the last used first: redis-py's checkout and return of a pooled connection (a
        # condition, a timeout, its health read, its event and metric hooks) cost more CPU than
        # a step's own commands. The pool counts them in use (at most `_pipes_for` of it); a
        # failure, the store going out or redis-py marking one for a reconnect hands it back.
        self._pipes: set[Pipe] = set()
        self._idle: list[Pipe] = []
        self._releasing: set[asyncio.Task[None]] = set()

    def command(self, *args: Any) -> asyncio.Future[Any]:
        """Queue a command (`"MGET", key, ...`); its reply, or its error, comes in the future."""
        return self._queue(args, None)

    def script(self, script: Script, keys: list[str], args: list[Any]) -> asyncio.Future[Any]:
        """Queue a run of `script`."""
        return self._queue(("EVALSHA", script.sha, len(keys), *keys, *args), script)

    async def all(self, replies: list[asyncio.Future[Any]]) -> list[Any]:
        """Every reply; once all have come, the first error among them is raised (as a pipeline
        that raises on error does: the others ran)."""
        done: list[Any] = []
        failure: BaseException | None = None
        # Awaited in turn rather than gathered: they come in one batch's replies, mostly at once
        # (a gather's future and callbacks cost more than the waits).
        try:
            for reply in replies:
                try:
                    done.append(await reply)
                except Exception as exc:
                    done.append(exc)
                    failure = failure or exc
        except BaseException:  # the caller was cancelled: so are its replies still to come
            for reply in replies:
                reply.cancel()
            raise
        if failure is not None:
            raise failure
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
        if calls:
            self._start(calls, [])

    def _start(self, calls: list[_Call], load: list[str]) -> None:
        """Send `calls` (after loading the scripts `load`) on an idle pipe, or on a connection
        taken from the pool in a task of their own."""
        if getattr(self._client.connection_pool, "out", False):
            _fail(calls, RedisConnectionError("the trajectory store is out"))
            return
        while self._idle:
            pipe = self._idle.pop()
            if pipe.sound:
                self._send_on(pipe, calls, load)
                return
            self._drop(pipe)
        task = asyncio.get_running_loop().create_task(self._open(calls, load))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    def _send_on(self, pipe: Pipe, calls: list[_Call], load: list[str]) -> None:
        try:
            packed = _packed(calls, load)
        except Exception as exc:  # a value no command can carry: those callers hear it
            _fail(calls, exc)
            self._rest(pipe)
            return
        pipe.send(packed, _Batch(self, calls, load))

    async def _open(self, calls: list[_Call], load: list[str]) -> None:
        """`calls` on a connection from the pool: taken over as a pipe, or (another shape of
        connection, a pool of one) through redis-py's calls and handed back."""
        pool = self._client.connection_pool
        try:
            connection = await pool.get_connection()
        except Exception as exc:  # an outage, a busy pool: every caller of the batch hears it
            _fail(calls, exc)
            return
        except BaseException:  # the sender cancelled (shutdown): so are its callers
            _cancel(calls)
            raise
        # A pool of one keeps nothing for the batches: the store's calls outside them (a count,
        # a listing) would wait on it for good; and the pipes leave most of a pool to them and
        # to batches beyond the pipes' number, which go through redis-py and hand theirs back.
        taken = _pack_command is not None and len(self._pipes) < _pipes_for(pool)
        pipe = Pipe.take(connection, self._rest, self._lost) if taken else None
        if pipe is not None:
            self._pipes.add(pipe)
            self._send_on(pipe, calls, load)
            return
        try:
            replies = await _through_redis_py(connection, _commands(calls, load))
        except Exception as exc:
            await connection.disconnect(nowait=True)
            await pool.release(connection)
            _fail(calls, exc)
            return
        except BaseException:
            await connection.disconnect(nowait=True)
            await pool.release(connection)
            _cancel(calls)
            raise
        await pool.release(connection)
        self._done(calls, load, replies)

    def _done(self, calls: list[_Call], load: list[str], result: list[Any] | BaseException) -> None:
        """A batch's replies to its callers; commands Redis answered NOSCRIPT (it lost its
        scripts) are sent again after loading them, in one round trip: Redis runs a pipeline in
        order, so each `SCRIPT LOAD` comes before the commands that need it. That is safe because
        a command answered NOSCRIPT did nothing; the batch's other commands ran in their turn."""
        if isinstance(result, BaseException):  # a failure of the connection: every caller hears it
            _fail(calls, result)
            return
        replies = result[len(load) :] if load else result
        # (A batch that loaded scripts was itself the resend: nothing of it is sent again.)
        missing = [] if load else [index for index, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
        for index, (call, reply) in enumerate(zip(calls, replies, strict=True)):
            # (A caller that gave up, cancelled: the command ran all the same. A command sent
            # again below: its reply comes then.)
            if call.reply.done() or (missing and index in missing):
                continue
            if isinstance(reply, Exception):
                call.reply.set_exception(reply)
            else:
                call.reply.set_result(reply)
        if missing:
            scripts = sorted({call.script.source for call in (calls[index] for index in missing) if call.script})
            # At the next turn: the pipe that read these replies is idle by then, and carries them.
            asyncio.get_running_loop().call_soon(self._start, [calls[index] for index in missing], scripts)

    def _rest(self, pipe: Pipe) -> None:
        """A pipe with no batch in flight: kept for the next, unless it is no longer sound, the
        store is out, or redis-py marked its connection for a reconnect."""
        pool = self._client.connection_pool
        if pipe.sound and not getattr(pool, "out", False) and not pipe.connection.should_reconnect():
            self._idle.append(pipe)
        else:
            self._drop(pipe)

    def _lost(self, pipe: Pipe) -> None:
        """A pipe that failed or was closed: its connection goes back to the pool, closed."""
        self._pipes.discard(pipe)
        if pipe in self._idle:
            self._idle.remove(pipe)
        try:
            task = asyncio.get_running_loop().create_task(self._hand_back(pipe.connection))
        except RuntimeError:  # closed with no loop running (the process ending): nothing to hand back to
            return
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

    def _drop(self, pipe: Pipe) -> None:
        if pipe.lost:
            return
        pipe.close()  # calls `_lost`

    async def _hand_back(self, connection: Any) -> None:
        await connection.disconnect(nowait=True)
        await self._client.connection_pool.release(connection)

    async def aclose(self) -> None:
        """Send what is queued, wait for the batches in flight, hand the connections back."""
        self._flush()
        for _ in range(3):  # a batch answered NOSCRIPT is sent once more
            waiting = [
                call.reply
                for pipe in self._pipes
                for written in pipe.waiting
                if isinstance(written, _Batch)
                for call in written.calls
            ]
            if not self._sending and not waiting:
                break
            await asyncio.gather(*self._sending, *waiting, return_exceptions=True)
        for pipe in list(self._pipes):
            self._drop(pipe)
        if self._releasing:
            await asyncio.gather(*self._releasing, return_exceptions=True)


class _Batch(Written):
    """Calls written on a pipe (after loading the scripts `load`)."""

    __slots__ = ("batcher", "calls", "load")

    def __init__(self, batcher: Batcher, calls: list[_Call], load: list[str]) -> None:
        super().__init__(len(load) + len(calls))
        self.batcher = batcher
        self.calls = calls
        self.load = load

    def done(self, result: list[Any] | BaseException) -> None:
        self.batcher._done(self.calls, self.load, result)


# Pipes a batcher owns at most (batches beyond them in flight at once go through redis-py on a
# pooled connection): a quarter of the pool, none where the pool holds one connection.
MAX_PIPES = 8


def _pipes_for(pool: Any) -> int:
    size = int(pool.max_connections)
    return 0 if size <= 1 else min(MAX_PIPES, max(1, size // 4))


def _commands(calls: list[_Call], load: list[str]) -> list[tuple[Any, ...]]:
    commands: list[tuple[Any, ...]] = [("SCRIPT", "LOAD", source) for source in load]
    commands += [call.args for call in calls]
    return commands


def _packed(calls: list[_Call], load: list[str]) -> bytes:
    pack = _pack_command
    assert pack is not None  # pipes are taken only where hiredis packs (Batcher._open)
    if load:
        return b"".join([pack(command) for command in _commands(calls, load)])
    return b"".join([pack(call.args) for call in calls])


async def _through_redis_py(connection: Any, commands: list[tuple[Any, ...]]) -> list[Any]:
    """The replies to `commands` by redis-py's own send and read: an error reply in its place."""
    await connection.send_packed_command(connection.pack_commands(commands), check_health=False)
    replies: list[Any] = []
    for _ in commands:
        try:
            replies.append(await connection.read_response())
        except ResponseError as exc:
            replies.append(exc)
    return replies


def _fail(calls: list[_Call], exc: BaseException) -> None:
    for call in calls:
        if not call.reply.done():
            call.reply.set_exception(exc)


def _cancel(calls: list[_Call]) -> None:
    for call in calls:
        call.reply.cancel()
