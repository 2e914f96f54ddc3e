"""Responses kept for `previous_response_id`: a request that names an earlier response gets the
conversation that response ended as the start of its input, as OpenAI's Responses API does.

Each kept response holds only what its own request added (its input items) and its output, with
the ids of the responses before it in its conversation (`chain`): a conversation of n turns is
kept once, not n times, and is read back in two round trips whatever its length (the response
named, then its chain's in one `MGET`). Kept in Redis beside the trajectories when the gateway
shares them (every replica and worker reads the same), else in this process, bounded in bytes
(the oldest go first); in both, for `kept_responses.ttl_s`. Keys are per client namespace: a
client key's responses are not another key's to read, name or delete.

Every kept response is also held by the process that answered it (bounded in bytes), so that
while Redis is out a conversation continued on the same process goes on; one continued
elsewhere is answered with a 400 that says to send the whole conversation (what a client with
`store: false` does). A response kept while Redis was out stays in that process only.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
import redis.exceptions

from router.errors import GatewayError, bad_request
from router.metrics.core import Metrics
from router.protocol.fields import shown

log = logging.getLogger("tandem")

# A conversation longer than this many kept turns is refused rather than read back (each turn's
# record names every turn before it).
MAX_TURNS = 10_000


# A record set and the conversation's earlier turns renewed, in one command (through redis-py,
# a pipeline of a PEXPIRE a turn made keeping a 60-turn conversation's step ~0.5 ms slower).
# KEYS: the record's, then the earlier turns'; ARGV: the record, the time-to-live in ms.
_KEEP = """
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
for i = 2, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
return #KEYS
"""


@dataclass(slots=True)
class Turn:
    """What a request that names a kept response continues: the conversation's items so far (its
    turns' inputs and outputs, in order) and the ids of its turns."""

    items: list[Any]
    chain: list[str]


@dataclass(slots=True)
class Keep:
    """A request whose answer is to be kept: its own input items and the turns before it."""

    namespace: str
    input: list[Any]
    chain: list[str] = field(default_factory=list)


class _Memory:
    """Kept records of this process: by key, with their expiry, bounded in bytes."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._kept: OrderedDict[str, tuple[float, bytes]] = OrderedDict()

    def put(self, key: str, record: bytes, expires: float) -> None:
        self.pop(key)
        if len(record) > self.max_bytes:
            return
        self._kept[key] = (expires, record)
        self.bytes += len(record)
        while self.bytes > self.max_bytes:
            _, (_, oldest) = self._kept.popitem(last=False)
            self.bytes -= len(oldest)

    def renew(self, keys: list[str], expires: float) -> None:
        """The records under `keys` (a conversation's earlier turns) expire at `expires`, and are
        the newest again (the last to go when the bytes run out)."""
        kept = self._kept
        for key in keys:
            entry = kept.get(key)
            if entry is not None:
                kept[key] = (expires, entry[1])
                kept.move_to_end(key)

    def __len__(self) -> int:
        return len(self._kept)

    def __contains__(self, key: object) -> bool:
        return key in self._kept

    def get(self, key: str, now: float) -> bytes | None:
        kept = self._kept.get(key)
        if kept is None:
            return None
        if kept[0] <= now:
            self.pop(key)
            return None
        return kept[1]

    def pop(self, key: str) -> bool:
        kept = self._kept.pop(key, None)
        if kept is None:
            return False
        self.bytes -= len(kept[1])
        return True


class KeptResponses:
    """The kept responses of one gateway process (in Redis when `redis_client` is given)."""

    def __init__(
        self,
        redis_client: Any | None,
        prefix: str,
        ttl_s: float,
        memory_bytes: int,
        available: Callable[[], bool] = lambda: True,
        metrics: Metrics | None = None,
    ) -> None:
        self._redis = redis_client
        self._metrics = metrics
        self._available = available  # False while the shared store is known to be out
        self._prefix = f"{prefix}response:"
        self._ttl_s = ttl_s
        # Every kept record is in this process too (bounded), so that its conversations go on
        # through an outage; with Redis, a record missing there is read here only when it was
        # kept while Redis was out (`_unshared`): one another replica deleted stays deleted.
        self._memory = _Memory(memory_bytes)
        self._unshared: set[str] = set()
        self._keep_script: Any = None if redis_client is None else redis_client.register_script(_KEEP)

    def _key(self, namespace: str, response_id: str) -> str:
        return f"{self._prefix}{namespace}:{response_id}"

    async def _get_many(self, keys: list[str]) -> list[bytes | str | None]:
        """The records under `keys`: Redis's (text: the shared client decodes replies), else
        this process's where Redis is out or the record was kept here while it was."""
        now, memory = time.time(), self._memory
        if self._redis is None or not self._available():
            return [memory.get(key, now) for key in keys]
        try:
            values: list[str | None] = await self._redis.mget(keys)
        except redis.exceptions.RedisError as exc:
            log.warning("kept responses: reading Redis failed (%s); reading this process's", exc)
            self._store_error()
            return [memory.get(key, now) for key in keys]
        found: list[bytes | str | None] = []
        for key, value in zip(keys, values, strict=True):
            if value is None and key in self._unshared:
                found.append(memory.get(key, now))
            else:
                found.append(value)
        return found

    async def read(self, namespace: str, response_id: str) -> dict[str, Any] | None:
        """The kept record of `response_id` (`response`, `input`, `chain`), or None."""
        (record,) = await self._get_many([self._key(namespace, response_id)])
        return None if record is None else _loaded(record)

    async def turn(self, namespace: str, previous: str) -> Turn:
        """The conversation `previous` ended; a 400 naming the parameter when it is not kept.
        (Its size needs no bound here: each turn kept was a body within `max_body_bytes`, the
        turns before it included, and the body it makes is measured before it is read.)"""
        try:
            turn = await self._conversation(namespace, previous)
            if turn is None:
                raise _not_kept(previous)
        except GatewayError:
            self.count("not_found")
            raise
        self.count("continued")
        return turn

    async def inputs(self, namespace: str, response_id: str) -> list[Any] | None:
        """The items `response_id` answered (its conversation before its own output), or None
        when it or an earlier turn of its conversation is not kept."""
        try:
            turn = await self._conversation(namespace, response_id, with_output=False)
        except GatewayError:  # (an earlier turn not kept: `_not_kept`, a 400 for a request naming it)
            return None
        return None if turn is None else turn.items

    async def conversation(self, namespace: str, response_id: str) -> Turn | None:
        """The conversation `response_id` ended, as `turn` gives it, or None when any of its turns
        is not kept (nothing counted: no request named it)."""
        try:
            return await self._conversation(namespace, response_id)
        except GatewayError:
            return None

    async def _conversation(self, namespace: str, last: str, with_output: bool = True) -> Turn | None:
        record = await self.read(namespace, last)
        if record is None:
            return None
        chain: list[str] = record["chain"]
        records = await self._get_many([self._key(namespace, one) for one in chain]) if chain else []
        items: list[Any] = []
        for one, kept in zip(chain, records, strict=True):
            if kept is None:
                raise _not_kept(last, one)
            earlier = _loaded(kept)
            items += earlier["input"]
            items += _replayed(earlier["response"])
        items += record["input"]
        if with_output:
            items += _replayed(record["response"])
        return Turn(items, [*chain, last])

    async def keep(self, keep: Keep, response: dict[str, Any]) -> None:
        """Keep `response` (answered to `keep`'s request); a failure is logged, never raised:
        the answer is out, and a later request naming it gets the 400 that says what to do."""
        response_id = response.get("id")
        if not isinstance(response_id, str) or len(keep.chain) >= MAX_TURNS:
            return
        record = orjson.dumps({"response": response, "input": keep.input, "chain": keep.chain})
        key = self._key(keep.namespace, response_id)
        # A conversation is kept for ttl_s after its latest turn: its earlier turns are renewed
        # with it (an agent's run may last longer than ttl_s; its first turn must not expire
        # while its latest is continued).
        earlier = [self._key(keep.namespace, one) for one in keep.chain]
        expires = time.time() + self._ttl_s
        self._memory.put(key, record, expires)
        self._memory.renew(earlier, expires)
        self._held()
        if self._redis is None:
            self.count("kept_here")
            return
        if self._available():
            try:
                await self._keep_script(keys=[key, *earlier], args=[record, int(self._ttl_s * 1000)])
                self.count("kept")
                return
            except redis.exceptions.RedisError as exc:
                log.warning("kept responses: writing Redis failed (%s); %s kept in this process", exc, response_id)
                self._store_error()
        self.count("kept_here")
        self._unshared.add(key)
        if len(self._unshared) > 2 * len(self._memory):
            self._unshared = {one for one in self._unshared if one in self._memory}

    async def delete(self, namespace: str, response_id: str) -> bool:
        """Forget a kept response; whether it was kept."""
        key = self._key(namespace, response_id)
        deleted = self._memory.pop(key)
        self._held()
        self._unshared.discard(key)
        if self._redis is not None:
            try:
                deleted = bool(await self._redis.delete(key)) or deleted
            except redis.exceptions.RedisError as exc:
                self._store_error()
                raise GatewayError(
                    503,
                    f"the response could not be deleted: the shared store is out ({exc}); try again",
                    type="server_error",
                    code="store_unavailable",
                ) from exc
        if deleted:
            self.count("deleted")
        return deleted

    def count(self, event: str) -> None:
        """One more of `event` in tandem_kept_responses_total (the metric's help says which)."""
        if self._metrics is not None:
            self._metrics.kept_responses.labels(event).inc()

    def _store_error(self) -> None:
        if self._metrics is not None:
            self._metrics.store_errors.labels("kept_responses").inc()

    def _held(self) -> None:
        if self._metrics is not None:
            self._metrics.kept_responses_bytes.set(self._memory.bytes)


def _loaded(record: bytes | str) -> dict[str, Any]:
    loaded: dict[str, Any] = orjson.loads(record)
    return loaded


def _replayed(response: dict[str, Any]) -> list[Any]:
    """A kept response's output as the next request's input items (as OpenAI replays them)."""
    output = response.get("output")
    return list(output) if isinstance(output, list) else []


def _not_kept(previous: str, missing: str | None = None) -> GatewayError:
    what = (
        f"response {shown(previous)}"
        if missing is None or missing == previous
        else (f"response {shown(missing)}, an earlier turn of the conversation {shown(previous)} continues,")
    )
    return bad_request(
        f"previous_response_id: {what} is not kept by this gateway (never answered here, answered with "
        "store: false or on a route that keeps nothing at rest, deleted, or past kept_responses.ttl_s); "
        "send the whole conversation in 'input' instead",
        param="previous_response_id",
        code="previous_response_not_found",
    )
