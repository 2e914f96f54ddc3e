"""Trajectory state in Redis, shared by every gateway replica.

Layout (prefix `tandem:` by default):
  {p}t:{id}     hash: the trajectory's fields and totals (HINCRBY / HINCRBYFLOAT, so that two
                replicas writing at once lose nothing)
  {p}t:{id}:r   list: one JSON step record per step attempt (no content; ~0.6 KB each)
  {p}recent     sorted set: id by last update (listing, export)
  {p}open       sorted set: id by last update, open trajectories only (the idle sweep)
  {p}s:{key}    string: message-history stitching key -> trajectory id
Starting a step is one Lua script (atomic: a retry and a new step cannot both count);
recording steps is one MULTI pipeline per batch.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import orjson
import redis.asyncio as redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from router.ledger import StepRecord
from router.trajectory.state import (
    COUNT_FIELDS,
    MONEY_FIELDS,
    NOTE_PREFIX,
    ListQuery,
    Outcome,
    StepSlot,
    StepStart,
    Trajectory,
    increments,
)
from router.trajectory.store import MAX_RECORDS_KEPT

# How long a step start's or a record's token is remembered: longer than a reply can be late
# (a frozen Redis that resumes) and than an outage's write-back takes.
TOKEN_TTL_S = 3600
MAX_RECENT = 1_000_000

# KEYS: the trajectory hash, recent, open, the start's token key.
# ARGV: fingerprint, retry flag, now, task, route, namespace, ttl, id, force-new flag, token ttl,
# the oldest time kept in the indexes, the most ids kept in `recent`.
_BEGIN_STEP = """
local h = KEYS[1]
local seen = redis.call('GET', KEYS[4])
if seen then
  local step, attempt = string.match(seen, '(%d+):(%d+)')
  return {tonumber(step), tonumber(attempt), redis.call('HGETALL', h)}
end
local fp, retry, now, id = ARGV[1], ARGV[2], ARGV[3], ARGV[8]
local steps = tonumber(redis.call('HGET', h, 'steps') or '0')
local attempt = 1
local is_retry = false
if steps > 0 and ARGV[9] ~= '1' then
  if retry == '1' then
    is_retry = true
  elseif redis.call('HGET', h, 'last_fingerprint') == fp then
    is_retry = true
  end
end
if is_retry then
  attempt = redis.call('HINCRBY', h, 'attempts', 1)
else
  if steps == 0 then
    redis.call('HSET', h, 'id', id, 'created_at', now, 'task', ARGV[4], 'route', ARGV[5], 'namespace', ARGV[6])
  end
  steps = redis.call('HINCRBY', h, 'steps', 1)
  redis.call('HSET', h, 'attempts', 1, 'last_fingerprint', fp)
end
redis.call('HSET', h, 'last_status', 'pending')
if tonumber(redis.call('HGET', h, 'updated_at') or '0') < tonumber(now) then
  redis.call('HSET', h, 'updated_at', now)
end
redis.call('EXPIRE', h, tonumber(ARGV[7]))
redis.call('SET', KEYS[4], steps .. ':' .. attempt, 'EX', tonumber(ARGV[10]))
redis.call('ZADD', KEYS[2], now, id)
if redis.call('HEXISTS', h, 'closed_at') == 0 then
  redis.call('ZADD', KEYS[3], now, id)
end
-- Bounded indexes: ids whose trajectory has expired leave both; `recent` keeps the newest only.
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[11])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[11])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[12]) - 1)
return {steps, attempt, redis.call('HGETALL', h)}
"""

# One step record, once: KEYS: the trajectory hash, its record list, the record's token key.
# ARGV: the record, its status, the cloud step index or '', ttl, records kept, token ttl, then
# pairs of ('i:' or 'f:' + total name, increment).
_RECORD = """
if not redis.call('SET', KEYS[3], '1', 'NX', 'EX', tonumber(ARGV[6])) then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[5]) - 1)
for i = 7, #ARGV, 2 do
  local name = string.sub(ARGV[i], 3)
  if string.sub(ARGV[i], 1, 1) == 'i' then
    redis.call('HINCRBY', KEYS[1], name, ARGV[i + 1])
  else
    redis.call('HINCRBYFLOAT', KEYS[1], name, ARGV[i + 1])
  end
end
redis.call('HSET', KEYS[1], 'last_status', ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'last_cloud_step', ARGV[3]) end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[4]))
return 1
"""

_NOTE = """
if ARGV[3] == '1' then
  if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then
    return redis.call('HGET', KEYS[1], ARGV[1])
  end
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return ARGV[2]
"""

_SET_OUTCOME = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('HSETNX', KEYS[1], 'outcome', ARGV[1])
"""

_CLOSE = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[2], ARGV[3])  -- expired: it must not stay open for ever
  return nil
end
if redis.call('HSETNX', KEYS[1], 'closed_at', ARGV[1]) == 0 then return nil end
redis.call('HSET', KEYS[1], 'close_reason', ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[3])
return redis.call('HGETALL', KEYS[1])
"""


def _trajectory(fields: dict[str, str]) -> Trajectory:
    outcome = fields.get("outcome")
    closed = fields.get("closed_at")
    return Trajectory(
        id=fields.get("id", ""),
        namespace=fields.get("namespace", ""),
        route=fields.get("route", ""),
        task=fields.get("task", ""),
        created_at=float(fields.get("created_at", 0)),
        updated_at=float(fields.get("updated_at", 0)),
        steps=int(fields.get("steps", 0)),
        counts={name: int(fields.get(name, 0)) for name in COUNT_FIELDS},
        money={name: float(fields.get(name, 0)) for name in MONEY_FIELDS},
        last_fingerprint=fields.get("last_fingerprint", ""),
        last_status=fields.get("last_status", ""),
        notes={key[len(NOTE_PREFIX) :]: value for key, value in fields.items() if key.startswith(NOTE_PREFIX)},
        closed_at=float(closed) if closed else None,
        close_reason=fields.get("close_reason"),
        outcome=Outcome.from_dict(orjson.loads(outcome)) if outcome else None,
    )


class RedisStore:
    def __init__(
        self,
        url: str,
        prefix: str = "tandem:",
        ttl_s: float = 7 * 24 * 3600.0,
        timeout_s: float = 0.5,
        max_recent: int = MAX_RECENT,
    ) -> None:
        # No retries inside the client: a failure must reach the resilient wrapper at once.
        self._redis: Any = redis.Redis.from_url(
            url,
            decode_responses=True,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            retry=Retry(NoBackoff(), 0),
            health_check_interval=0,
        )
        self._prefix = prefix
        self._ttl = max(int(ttl_s), 1)
        self._max_recent = max_recent
        self._record = self._redis.register_script(_RECORD)
        self._begin = self._redis.register_script(_BEGIN_STEP)
        self._set_outcome = self._redis.register_script(_SET_OUTCOME)
        self._close = self._redis.register_script(_CLOSE)
        self._note = self._redis.register_script(_NOTE)

    def _key(self, trajectory_id: str) -> str:
        return f"{self._prefix}t:{trajectory_id}"

    @property
    def client(self) -> Any:
        """The Redis connection pool, for other shared state of the gateway (client limits)."""
        return self._redis

    @property
    def prefix(self) -> str:
        return self._prefix

    async def begin_step(self, start: StepStart, *, new_step: bool = False) -> StepSlot:
        """Count a step; `new_step` (a write-back after an outage) never takes it for a retry."""
        token = start.token or uuid.uuid4().hex
        keys = [
            self._key(start.trajectory_id),
            f"{self._prefix}recent",
            f"{self._prefix}open",
            f"{self._prefix}k:{token}",
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
        step, attempt, flat = await self._begin(keys=keys, args=args)
        return StepSlot(int(step), int(attempt), _trajectory(dict(zip(flat[::2], flat[1::2], strict=True))))

    async def note(self, trajectory_id: str, key: str, value: str, *, keep_first: bool = False) -> str:
        kept: str = await self._note(
            keys=[self._key(trajectory_id)], args=[NOTE_PREFIX + key, value, "1" if keep_first else "0"]
        )
        return kept

    async def record_many(self, records: list[StepRecord], tokens: list[str] | None = None) -> None:
        """Write step records; a record whose token was written already is not written again."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for index, record in enumerate(records):
                key = self._key(record.trajectory_id)
                token = tokens[index] if tokens is not None else uuid.uuid4().hex
                counts, money = increments(record)
                totals: list[Any] = []
                for name, value in counts.items():
                    if value and name != "last_cloud_step":
                        totals += [f"i:{name}", value]
                for name, amount in money.items():
                    if amount:
                        totals += [f"f:{name}", repr(amount)]
                cloud_step = str(record.step) if record.target == "cloud" and record.status != "error" else ""
                await self._record(
                    keys=[key, f"{key}:r", f"{self._prefix}k:{token}"],
                    args=[
                        orjson.dumps(record.as_dict()),
                        record.status,
                        cloud_step,
                        self._ttl,
                        MAX_RECORDS_KEPT,
                        TOKEN_TTL_S,
                        *totals,
                    ],
                    client=pipe,
                )
            await pipe.execute()

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
                rows = await pipe.execute()
            for fields in rows:
                if not fields:
                    continue  # expired
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
        value: str | None = await self._redis.get(f"{self._prefix}s:{key}")
        return value

    async def stitch_remember(self, key: str, trajectory_id: str) -> None:
        await self._redis.set(f"{self._prefix}s:{key}", trajectory_id, ex=self._ttl)

    async def active_count(self) -> int:
        count: int = await self._redis.zcard(f"{self._prefix}open")
        return count

    async def ping(self) -> None:
        await self._redis.ping()

    async def aclose(self) -> None:
        await self._redis.aclose()
