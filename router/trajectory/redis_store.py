"""Trajectory state in Redis, shared by every gateway replica.

Layout (prefix `tandem:` by default):
  {p}t:{id}     hash: the trajectory's fields and totals (HINCRBY / HINCRBYFLOAT, so that two
                replicas writing at once lose nothing)
  {p}t:{id}:r   list: one JSON step record per step attempt (no content; ~0.6 KB each)
  {p}t:{id}:v   hash: the trajectory's privacy vault (`vault:` notes: sealed values, value ids,
                exposure), apart from its hash so that a step's start does not read it
  {p}t:{id}:vl  list: the vault's keys in the order written (a new or changed value once), so
                that a replica reads only the entries written since it last read (VAULT_SINCE)
  {p}t:{id}:a   bitmap: the steps whose answers are counted in `cloud_steps`/`edge_steps` (a
                step counts once, whichever of its answered attempts is recorded first)
  {p}t:{id}:d   bitmap: the steps that have a record (bit 0: kept since the trajectory's first
                step), so that a step counted with no record is found (router/trajectory/lost.py)
  {p}recent     sorted set: id by last update (listing, export)
  {p}open       sorted set: id by last update, open trajectories only (the idle sweep)
  {p}s:{key}    string: message-history stitching key -> trajectory id
  {p}k:{token}  string, an hour: a step start's or a record's token, so each counts once
  {p}writeback  string, for the lost-step bound: a replica began writing an outage's journal
                back (no step is recorded lost meanwhile: its record may be in a journal)
  {p}q:…        client limits' counters (router/quota.py)
Starting a step is one Lua script (atomic: a retry and a new step cannot both count); each
record is one script (written once, by its token). A step's commands, and those of the steps
running beside it, leave in pipelines (`redis_batch.Batcher`: what one turn of the event loop
asks is one round trip; scripts by digest, loaded again when Redis answers NOSCRIPT).
The vault's two keys expire with the trajectory's hash and are deleted when a trajectory begins
anew under the same id. The indexes are bounded: ids older than the time-to-live leave both, `recent` keeps the newest.

The connections are a bounded pool (`redis_pool_size` a process): a call that finds every
connection busy waits for one (up to `redis_pool_wait_s`) rather than failing, since a busy pool
is load, not an outage; past the wait it raises `PoolBusy`, which is not a connection error.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import orjson
import redis.asyncio as redis
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.retry import Retry

from router.ledger import StepRecord
from router.notes import read as read_notes
from router.trajectory.merges import Merge
from router.trajectory.redis_batch import Batcher, Script
from router.trajectory.redis_scripts import (
    BEGIN_STEP,
    CLOSE,
    LOST_STEPS,
    MERGE,
    NOTE,
    RECORD,
    SET_OUTCOME,
    VAULT_NOTE,
    VAULT_SINCE,
)
from router.trajectory.state import (
    COUNT_FIELDS,
    MONEY_FIELDS,
    NOTE_PREFIX,
    ListQuery,
    LostSteps,
    Outcome,
    StepSlot,
    StepStart,
    Trajectory,
    VaultRead,
    increments,
)
from router.trajectory.store import MAX_RECORDS_KEPT

# How long a step start's or a record's token is remembered: longer than a reply can be late
# (a frozen Redis that resumes) and than an outage's write-back takes.
TOKEN_TTL_S = 3600
MAX_RECENT = 1_000_000
WRITE_BUFFER_BYTES = 64 * 1024 * 1024


class PoolBusy(RedisError):
    """Every pooled connection stayed in use for the whole wait: the store is busy, not out."""


class WaitingPool(redis.BlockingConnectionPool):
    """A bounded pool whose callers wait for a free connection; a wait that runs out raises
    `PoolBusy` (redis-py raises a ConnectionError, which would read as an outage). While the
    store is `out`, a caller gets a connection error at once rather than a connection: one
    that waited through the start of an outage must not then wait on a dead Redis in turn."""

    out = False

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        if self.out:
            raise RedisConnectionError("the trajectory store is out")
        try:
            connection = await super().get_connection(*args, **kwargs)  # type: ignore[no-untyped-call]
        except RedisConnectionError as exc:
            # Only the wait's own expiry (a connection that cannot be made is a real failure).
            if type(exc) is RedisConnectionError and isinstance(exc.__cause__, TimeoutError):
                busy = f"no Redis connection free after {self.timeout} s ({self.max_connections} in use)"
                raise PoolBusy(busy) from exc
            raise
        if self.out:
            await self.release(connection)
            raise RedisConnectionError("the trajectory store went out while this call waited for a connection")
        # A pipeline of megabytes (an outage's write-back) is handed to the transport whole: with
        # the default 64 KB mark, sending it would wait for the socket dozens of times, each a
        # turn of an event loop that, under load, takes tens of milliseconds.
        writer = getattr(connection, "_writer", None)
        if writer is not None:
            writer.transport.set_write_buffer_limits(high=WRITE_BUFFER_BYTES)
        return connection


# What each of a trajectory hash's fields holds (the rest: the notes, under NOTE_PREFIX, and the
# fields `_trajectory` reads by name).
_COUNTS = frozenset(COUNT_FIELDS)
_MONEY = frozenset(MONEY_FIELDS)


def _trajectory(fields: dict[str, str]) -> Trajectory:
    outcome = fields.get("outcome")
    closed = fields.get("closed_at")
    # One pass over the fields (a step's start reads the hash back each step): the totals that
    # are there, and the notes.
    counts = dict.fromkeys(COUNT_FIELDS, 0)
    money = dict.fromkeys(MONEY_FIELDS, 0.0)
    notes = []
    for key, value in fields.items():
        if key in _COUNTS:
            counts[key] = int(value)
        elif key in _MONEY:
            money[key] = float(value)
        elif key.startswith(NOTE_PREFIX):
            notes.append((key[len(NOTE_PREFIX) :], value))
    return Trajectory(
        id=fields.get("id", ""),
        namespace=fields.get("namespace", ""),
        route=fields.get("route", ""),
        task=fields.get("task", ""),
        created_at=float(fields.get("created_at", 0)),
        updated_at=float(fields.get("updated_at", 0)),
        steps=int(fields.get("steps", 0)),
        counts=counts,
        money=money,
        last_fingerprint=fields.get("last_fingerprint", ""),
        last_status=fields.get("last_status", ""),
        notes=read_notes(notes),
        closed_at=float(closed) if closed else None,
        close_reason=fields.get("close_reason"),
        outcome=Outcome.from_dict(orjson.loads(outcome)) if outcome else None,
    )


def _slot(reply: Any) -> StepSlot:
    step, attempt, flat, vault_size = reply
    trajectory = _trajectory(dict(zip(flat[::2], flat[1::2], strict=True))) if flat else None
    if trajectory is not None:
        trajectory.vault_size = int(vault_size)
    return StepSlot(int(step), int(attempt), trajectory)


class RedisStore:
    def __init__(
        self,
        url: str,
        prefix: str = "tandem:",
        ttl_s: float = 7 * 24 * 3600.0,
        timeout_s: float = 0.5,
        max_recent: int = MAX_RECENT,
        pool_size: int = 128,
        pool_wait_s: float = 10.0,
    ) -> None:
        # No retries inside the client: a failure must reach the resilient wrapper at once.
        pool = WaitingPool.from_url(
            url,
            max_connections=pool_size,
            timeout=pool_wait_s,
            decode_responses=True,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            retry=Retry(NoBackoff(), 0),
            health_check_interval=0,
        )
        self._pool = pool
        self._pool_wait_s = pool_wait_s
        self._redis: Any = redis.Redis(connection_pool=pool)
        self._prefix = prefix
        self._ttl = max(int(ttl_s), 1)
        self._max_recent = max_recent
        self._batch = Batcher(self._redis)
        self._record = Script(RECORD)
        self._begin = Script(BEGIN_STEP)
        self._note = Script(NOTE)
        self._vault_note = Script(VAULT_NOTE)
        self._merge = Script(MERGE)
        self._set_outcome = self._redis.register_script(SET_OUTCOME)
        self._close = self._redis.register_script(CLOSE)
        self._lost_steps = self._redis.register_script(LOST_STEPS)
        self._vault_since = self._redis.register_script(VAULT_SINCE)

    def _key(self, trajectory_id: str) -> str:
        return f"{self._prefix}t:{trajectory_id}"

    def _vault_keys(self, trajectory_id: str) -> list[str]:
        key = self._key(trajectory_id)
        return [f"{key}:v", f"{key}:vl"]

    @property
    def client(self) -> Any:
        """The Redis connection pool, for other shared state of the gateway (client limits)."""
        return self._redis

    @property
    def pool_wait_s(self) -> float:
        """How long a call waits for a free pooled connection before `PoolBusy`."""
        return self._pool_wait_s

    @property
    def prefix(self) -> str:
        return self._prefix

    def _begin_call(self, start: StepStart, new_step: bool) -> tuple[list[str], list[Any]]:
        token = start.token or uuid.uuid4().hex
        keys = [
            self._key(start.trajectory_id),
            f"{self._prefix}recent",
            f"{self._prefix}open",
            f"{self._prefix}k:{token}",
            *self._vault_keys(start.trajectory_id),
            f"{self._key(start.trajectory_id)}:d",
        ]
        args = [
            start.fingerprint,
            "1" if start.retry else "0",
            repr(start.at),
            start.task,
            start.route,
            start.namespace,
            self._ttl,
            start.trajectory_id,
            "1" if new_step else "0",
            TOKEN_TTL_S,
            repr(time.time() - self._ttl),
            self._max_recent,
        ]
        return keys, args

    async def begin_step(self, start: StepStart, *, new_step: bool = False) -> StepSlot:
        """Count a step; `new_step` (a write-back after an outage) never takes it for a retry."""
        keys, args = self._begin_call(start, new_step)
        return _slot(await self._batch.script(self._begin, keys, args))

    async def count_new_steps(self, starts: list[StepStart]) -> list[StepSlot]:
        """Count steps as new ones (never retries), in one round trip: an outage's write-back."""
        replies = [self._batch.script(self._begin, *self._begin_call(start, True)) for start in starts]
        return [_slot(reply) for reply in await self._batch.all(replies)]

    async def note(self, trajectory_id: str, key: str, value: str, *, keep_first: bool = False) -> str:
        args: list[Any] = [NOTE_PREFIX + key, value, "1" if keep_first else "0"]
        kept: str = await self._batch.script(self._note, [self._key(trajectory_id)], args)
        return kept

    async def note_many(self, notes: list[tuple[str, str, str, bool, bool]]) -> None:
        """Notes (trajectory id, key, value, keep_first, in the vault) in one round trip, in order."""
        replies = []
        for trajectory_id, key, value, keep_first, vault in notes:
            flag = "1" if keep_first else "0"
            if vault:
                vault_args: list[Any] = [key, value, flag, self._ttl]
                replies.append(self._batch.script(self._vault_note, self._vault_keys(trajectory_id), vault_args))
            else:
                args: list[Any] = [NOTE_PREFIX + key, value, flag]
                replies.append(self._batch.script(self._note, [self._key(trajectory_id)], args))
        await self._batch.all(replies)

    async def vault_note(self, trajectory_id: str, key: str, value: str, *, keep_first: bool = False) -> str:
        args: list[Any] = [key, value, "1" if keep_first else "0", self._ttl]
        kept: str = await self._batch.script(self._vault_note, self._vault_keys(trajectory_id), args)
        return kept

    async def vault_notes(
        self, trajectory_id: str, entries: list[tuple[str, str]], *, keep_first: bool = False
    ) -> list[str]:
        if not entries:
            return []
        flag, keys = "1" if keep_first else "0", self._vault_keys(trajectory_id)
        replies = [self._batch.script(self._vault_note, keys, [key, value, flag, self._ttl]) for key, value in entries]
        kept: list[str] = await self._batch.all(replies)
        return kept

    async def vault_since(self, trajectory_id: str, since: int) -> VaultRead:
        position, flat = await self._vault_since(keys=self._vault_keys(trajectory_id), args=[since])
        return VaultRead(list(zip(flat[::2], flat[1::2], strict=True)), int(position))

    async def vault(self, trajectory_id: str) -> dict[str, str]:
        fields: dict[str, str] = await self._redis.hgetall(self._vault_keys(trajectory_id)[0])
        return fields

    def _record_call(self, record: StepRecord, token: str, lost: bool) -> Any:
        key = self._key(record.trajectory_id)
        counts, money = increments(record)
        totals: list[Any] = []
        for name, value in counts.items():
            if value:
                totals += [f"i:{name}", value]
        for name, amount in money.items():
            if amount:
                totals += [f"f:{name}", repr(amount)]
        answered = "" if record.answered_by == "none" else record.answered_by
        return self._batch.script(
            self._record,
            [key, f"{key}:r", f"{self._prefix}k:{token}", f"{key}:v", f"{key}:vl", f"{key}:a", f"{key}:d"],
            [
                orjson.dumps(record.as_dict()),
                record.status,
                answered,
                self._ttl,
                MAX_RECORDS_KEPT,
                TOKEN_TTL_S,
                record.step,
                "lost" if lost else "",
                *totals,
            ],
        )

    async def record_many(self, records: list[StepRecord], tokens: list[str] | None = None) -> list[bool]:
        """Write step records; a record whose token was written already is not written again.
        For each, whether it repeats an answer its step counted already."""
        replies = [
            self._record_call(record, tokens[index] if tokens is not None else uuid.uuid4().hex, lost=False)
            for index, record in enumerate(records)
        ]
        written: list[int] = await self._batch.all(replies)
        return [int(reply) % 10 == 2 for reply in written]

    async def record_lost(self, records: list[StepRecord], tokens: list[str]) -> list[bool]:
        """Write lost steps' records (router/trajectory/lost.py), each only while its step has no
        record: for each, whether this call wrote it (not when the step's own record came first,
        nor another replica's lost record; a token written already says what it did then)."""
        replies = [self._record_call(record, token, lost=True) for record, token in zip(records, tokens, strict=True)]
        written: list[int] = await self._batch.all(replies)
        return [int(reply) % 10 == 1 for reply in written]

    async def lost_steps(self, trajectory_id: str, lost_after_s: float, limit: int = MAX_RECORDS_KEPT) -> LostSteps:
        """The trajectory's steps counted with no record and begun more than `lost_after_s` ago
        by Redis' clock (the LOST_STEPS script: one round trip, most trajectories answered by a
        count of bits alone)."""
        key = self._key(trajectory_id)
        keys = [key, f"{key}:d", f"{key}:r", f"{self._prefix}writeback"]
        reply = await self._lost_steps(keys=keys, args=[repr(float(lost_after_s)), limit])
        if int(reply[0]) == 1:
            return LostSteps(wait_s=float(reply[1]))
        if int(reply[0]) == 0:
            return LostSteps()
        route, at, more = reply[1], float(reply[2]), int(reply[3]) == 1
        return LostSteps(tuple(int(step) for step in reply[4:]), route, at, more)

    async def mark_write_back(self, seconds: float) -> None:
        """Say that this replica writes an outage's journal back: for `seconds` no replica
        records a step lost (its record may be in this journal, or in another's)."""
        await self._redis.set(f"{self._prefix}writeback", "1", px=max(int(seconds * 1000), 1))

    async def get(self, trajectory_id: str) -> Trajectory | None:
        fields = await self._redis.hgetall(self._key(trajectory_id))
        return _trajectory(fields) if fields else None

    async def records(self, trajectory_id: str) -> list[StepRecord]:
        lines = await self._redis.lrange(f"{self._key(trajectory_id)}:r", 0, -1)
        return [StepRecord.from_dict(orjson.loads(line)) for line in lines]

    async def recent(self, query: ListQuery) -> list[Trajectory]:
        high: Any = f"({query.before!r}" if query.before is not None else "+inf"
        if query.until is not None and query.before is None:
            high = repr(query.until)
        low: Any = repr(query.since) if query.since is not None else "-inf"
        found: list[Trajectory] = []
        offset = 0
        batch = max(query.limit * 2, 20)
        while len(found) < query.limit:
            ids = await self._redis.zrevrangebyscore(f"{self._prefix}recent", high, low, start=offset, num=batch)
            if not ids:
                break
            offset += len(ids)
            async with self._redis.pipeline(transaction=False) as pipe:
                for trajectory_id in ids:
                    pipe.hgetall(self._key(trajectory_id))
                # A key of another type under a trajectory's name (written by hand, another
                # program) is one row left out, not the listing failed.
                rows = await pipe.execute(raise_on_error=False)
            for fields in rows:
                if not fields or isinstance(fields, Exception):
                    continue  # expired, or no trajectory's hash
                trajectory = _trajectory(fields)
                if query.route is not None and trajectory.route != query.route:
                    continue
                if query.namespace is not None and trajectory.namespace != query.namespace:
                    continue
                if query.until is not None and trajectory.updated_at > query.until:
                    continue
                found.append(trajectory)
        return found[: query.limit]

    async def set_outcome(self, trajectory_id: str, outcome: Outcome) -> bool:
        result = await self._set_outcome(keys=[self._key(trajectory_id)], args=[orjson.dumps(outcome.as_dict())])
        return int(result) == 1

    async def close(self, trajectory_id: str, reason: str, at: float) -> Trajectory | None:
        flat = await self._close(
            keys=[self._key(trajectory_id), f"{self._prefix}open"], args=[repr(at), reason, trajectory_id]
        )
        if not flat:
            return None
        return _trajectory(dict(zip(flat[::2], flat[1::2], strict=True)))

    async def idle(self, updated_before: float, limit: int) -> list[str]:
        # Ids whose trajectory has expired leave the open index here too (closing them finds
        # nothing to close), so that `open` and the active count never keep them.
        await self._redis.zremrangebyscore(f"{self._prefix}open", "-inf", f"({time.time() - self._ttl!r}")
        ids: list[str] = await self._redis.zrangebyscore(
            f"{self._prefix}open", "-inf", f"({updated_before!r}", start=0, num=limit
        )
        return ids

    async def stitch_find(self, key: str) -> str | None:
        return (await self.stitch_find_many([key]))[0]

    async def stitch_remember(self, key: str, trajectory_id: str) -> None:
        await self._batch.command("SET", f"{self._prefix}s:{key}", trajectory_id, "EX", self._ttl)

    async def stitch_find_many(self, keys: list[str]) -> list[str | None]:
        values: list[str | None] = await self._batch.command("MGET", *[f"{self._prefix}s:{key}" for key in keys])
        return values

    async def stitch_remember_many(self, pairs: list[tuple[str, str]]) -> None:
        """Stitching keys and values in one round trip (a step's, a write-back's), in order."""
        if not pairs:
            return
        prefix, ttl = f"{self._prefix}s:", self._ttl
        await self._batch.all([self._batch.command("SET", prefix + key, value, "EX", ttl) for key, value in pairs])

    async def stitch_merge(self, merges: list[Merge]) -> None:
        """The edits in one script (atomic: another replica's edits of the same entries come
        before or after, not between a read and a write)."""
        if not merges:
            return
        prefix = f"{self._prefix}s:"
        args: list[Any] = [self._ttl]
        for merge in merges:
            args += [merge.op, merge.a, merge.b, merge.c]
        await self._batch.script(self._merge, [prefix + merge.key for merge in merges], args)

    async def active_count(self) -> int:
        count: int = await self._redis.zcard(f"{self._prefix}open")
        return count

    def mark_out(self, out: bool) -> None:
        """While out, calls fail at once instead of taking (or waiting for) a connection."""
        self._pool.out = out

    async def reset_connections(self) -> None:
        """Drop every pooled connection: after Redis restarts, each would fail once more."""
        await self._redis.connection_pool.disconnect(inuse_connections=True)

    async def ping(self) -> None:
        await self._redis.ping()

    async def aclose(self) -> None:
        await self._batch.aclose()
        await self._redis.aclose()
        # A pool handed to the client is the caller's to close.
        await self._pool.disconnect()
