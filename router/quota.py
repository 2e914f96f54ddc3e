"""Limits per client key: requests per minute and cloud dollars per day.

Budgets per trajectory do not bound a client that starts a new session with every request;
these do, because they count by client key (its namespace), whatever the trajectory. With Redis
the counters are shared by every replica; without it (or while it is out) each process counts
alone. Requests count in fixed one-minute windows (UTC), refused ones included.

Cloud dollars count in UTC days, and are reserved before the step: a step is admitted only
while the key's dollars spent and held by steps in flight are under its limit, and then holds
its reservation (its estimated cost at the cloud's prices: `reservation_usd`) until its record
settles it with what it really cost (nothing, when it went to the edge or failed). The check
and the hold are one atomic operation (one Lua script in Redis; no await between them in a
process), so concurrent steps cannot all pass a limit they would cross together: what a key is
admitted to spend passes its limit by at most one step's reservation (as long as a step costs
no more than its reservation: a cloud answer longer than the reserved output is charged whole).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import redis.exceptions

from router.clock import SYSTEM_CLOCK, Clock
from router.config.prices import Prices
from router.errors import GatewayError
from router.ledger import cost_usd
from router.metrics.core import Metrics
from router.protocol.usage import Usage

log = logging.getLogger("tandem.quota")
DAY_S = 86_400
_REDIS_ERRORS = (redis.exceptions.RedisError, OSError)

# The check and the hold in one step. KEYS: this minute's request counter, today's dollars spent,
# today's dollars held. ARGV: the counter's lifetime (s), the requests limit ('' for none), the
# dollars limit ('' for none), dollars counted in this process meanwhile (Redis was out), the
# hold, the dollar keys' lifetime (s). Returns {refused: 0 | 1 requests | 2 dollars, requests,
# dollars spent and held}.
_ADMIT = """
local requests = redis.call('INCR', KEYS[1])
if requests == 1 then redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1])) end
if ARGV[2] ~= '' and requests > tonumber(ARGV[2]) then return {1, requests, '0'} end
if ARGV[3] == '' then return {0, requests, '0'} end
local dollars = tonumber(redis.call('GET', KEYS[2]) or '0') + tonumber(redis.call('GET', KEYS[3]) or '0')
dollars = dollars + tonumber(ARGV[4])
if dollars >= tonumber(ARGV[3]) then return {2, requests, tostring(dollars)} end
if tonumber(ARGV[5]) > 0 then
  redis.call('INCRBYFLOAT', KEYS[3], ARGV[5])
  redis.call('EXPIRE', KEYS[3], tonumber(ARGV[6]))
end
return {0, requests, tostring(dollars)}
"""


@dataclass(frozen=True, slots=True)
class Limit:
    requests_per_minute: int | None = None
    cloud_usd_per_day: float | None = None

    @property
    def active(self) -> bool:
        return self.requests_per_minute is not None or self.cloud_usd_per_day is not None


@dataclass(slots=True)
class Reservation:
    """Cloud dollars a step holds against its key's day, from its admission to its record."""

    namespace: str
    day: int
    held_usd: float
    shared: bool  # held in Redis, else in this process
    settled: bool = False


def reservation_usd(prompt_bytes: int, max_tokens: int | None, default_output_tokens: int, prices: Prices) -> float:
    """What a step is reckoned to cost at the cloud's prices before it is sent: its prompt at
    about 4 bytes a token (the ledger's estimate), and the output it may ask for (`max_tokens`)
    or, when it sets none, `client_limits.reserve_output_tokens`."""
    output = max_tokens if max_tokens is not None else default_output_tokens
    return cost_usd(Usage(prompt_bytes // 4, 0, output, source="estimated"), prices)


def requested_max_tokens(raw: Mapping[str, Any]) -> int | None:
    """The output a chat request asks for at most (`max_completion_tokens`, else `max_tokens`)."""
    for field in ("max_completion_tokens", "max_tokens"):
        value = raw.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


class ClientLimits:
    def __init__(
        self,
        default: Limit,
        per_namespace: Mapping[str, Limit],
        metrics: Metrics,
        redis_client: Any | None = None,
        prefix: str = "tandem:",
        shared_ok: Callable[[], bool] = lambda: True,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._default = default
        self._per_namespace = dict(per_namespace)
        self._metrics = metrics
        self._redis = redis_client
        self._prefix = prefix
        # False while the trajectory store knows Redis is out: count here, without waiting
        # for a timeout on every request.
        self._shared_ok = shared_ok
        # Where "now" comes from (a test's clock moves it: the windows are UTC minutes and days).
        self.clock = clock
        if self._redis is not None:
            self._admit = self._redis.register_script(_ADMIT)
        # The per-process counters: (namespace, window) -> count or dollars; old windows pruned.
        self._requests: dict[tuple[str, int], int] = {}
        self._dollars: dict[tuple[str, int], float] = {}
        self._held: dict[tuple[str, int], float] = {}

    @property
    def active(self) -> bool:
        return self._default.active or any(limit.active for limit in self._per_namespace.values())

    def limit_for(self, namespace: str) -> Limit:
        return self._per_namespace.get(namespace, self._default)

    async def admit(self, namespace: str, hold_usd: float = 0.0) -> Reservation | None:
        """Count a request of this key and hold `hold_usd` of its cloud day; 429 when it is over
        a limit. The reservation (None when the key has no dollar limit) is settled by `settle`."""
        limit = self.limit_for(namespace)
        if not limit.active:
            return None
        now = self.clock.time()
        minute, day = int(now // 60), int(now // DAY_S)
        if limit.cloud_usd_per_day is None:
            hold_usd = 0.0
        refused, _, dollars, shared = await self._check_and_hold(namespace, limit, minute, day, hold_usd)
        if refused == 1:
            wait = max(1, math.ceil((minute + 1) * 60 - now))
            raise self._refuse(
                "requests_per_minute",
                f"this API key is over its limit of {limit.requests_per_minute} requests per minute "
                f"(client_limits); try again in {wait} s",
                wait,
            )
        if refused == 2:
            wait = max(1, math.ceil((day + 1) * DAY_S - now))
            raise self._refuse(
                "cloud_usd_per_day",
                f"this API key has spent ${dollars:.4f} on the cloud today (steps in flight included), over "
                f"its limit of ${limit.cloud_usd_per_day:g} a day (client_limits); the day ends (UTC) in {wait} s",
                wait,
            )
        if limit.cloud_usd_per_day is None:
            return None
        return Reservation(namespace, day, hold_usd, shared)

    def _refuse(self, which: str, message: str, wait: int) -> GatewayError:
        self._metrics.client_limit_refusals.labels(which).inc()
        return GatewayError(
            429, message, type="rate_limit_error", code="rate_limit_exceeded", headers={"Retry-After": str(wait)}
        )

    async def _check_and_hold(
        self, namespace: str, limit: Limit, minute: int, day: int, hold_usd: float
    ) -> tuple[int, int, float, bool]:
        """(refused: 0, 1 requests, 2 dollars; requests this minute; dollars spent and held
        today; whether the hold is in Redis)."""
        local = (namespace, day)
        if self._redis is not None and self._shared_ok():
            try:
                keys = [
                    f"{self._prefix}q:rpm:{namespace}:{minute}",
                    f"{self._prefix}q:usd:{namespace}:{day}",
                    f"{self._prefix}q:held:{namespace}:{day}",
                ]
                counted_here = self._dollars.get(local, 0.0) + self._held.get(local, 0.0)
                args = [
                    120,
                    "" if limit.requests_per_minute is None else limit.requests_per_minute,
                    "" if limit.cloud_usd_per_day is None else repr(limit.cloud_usd_per_day),
                    repr(counted_here),
                    repr(hold_usd),
                    2 * DAY_S,
                ]
                refused, requests, dollars = await self._admit(keys=keys, args=args)
                return int(refused), int(requests), float(dollars), True
            except _REDIS_ERRORS as exc:
                log.warning("client limits: Redis failed (%s); counting in this process", exc)
        # In this process: the check and the hold with no await between them.
        requests = self._requests.get((namespace, minute), 0) + 1
        self._requests[(namespace, minute)] = requests
        self._prune(self._requests, minute)
        if limit.requests_per_minute is not None and requests > limit.requests_per_minute:
            return 1, requests, 0.0, False
        dollars = self._dollars.get(local, 0.0) + self._held.get(local, 0.0)
        if limit.cloud_usd_per_day is not None and dollars >= limit.cloud_usd_per_day:
            return 2, requests, dollars, False
        if hold_usd > 0:
            self._held[local] = self._held.get(local, 0.0) + hold_usd
            self._prune(self._held, day)
        return 0, requests, dollars, False

    async def release(self, reservation: Reservation) -> None:
        """Give the hold back early (the step cannot reach the cloud any more); its record still
        settles what it spent."""
        held, reservation.held_usd = reservation.held_usd, 0.0
        if held > 0 and not reservation.settled:
            await self._adjust(reservation, -held, 0.0)

    async def settle(self, reservation: Reservation, cloud_usd: float) -> None:
        """The step's record is in: its hold is replaced by what it cost on the cloud. Once."""
        if reservation.settled:
            return
        reservation.settled = True
        held, reservation.held_usd = reservation.held_usd, 0.0
        if held > 0 or cloud_usd > 0:
            await self._adjust(reservation, -held, max(cloud_usd, 0.0))

    async def _adjust(self, reservation: Reservation, held_delta: float, spent_delta: float) -> None:
        namespace, day = reservation.namespace, reservation.day
        if reservation.shared and self._redis is not None:
            try:
                held_key = f"{self._prefix}q:held:{namespace}:{day}"
                spent_key = f"{self._prefix}q:usd:{namespace}:{day}"
                async with self._redis.pipeline(transaction=True) as pipe:
                    if held_delta:
                        pipe.incrbyfloat(held_key, held_delta)
                        pipe.expire(held_key, 2 * DAY_S)
                    if spent_delta:
                        pipe.incrbyfloat(spent_key, spent_delta)
                        pipe.expire(spent_key, 2 * DAY_S)
                    await pipe.execute()
                return
            except _REDIS_ERRORS as exc:
                # The hold stays in Redis until the day's keys expire: the key is refused early
                # rather than let past its limit. What was spent is counted here meanwhile.
                log.warning("client limits: Redis failed (%s); a hold of $%.6f stays counted", exc, -held_delta)
                held_delta = 0.0
        if held_delta:
            left = self._held.get((namespace, day), 0.0) + held_delta
            self._held[(namespace, day)] = max(left, 0.0)
        if spent_delta:
            self._dollars[(namespace, day)] = self._dollars.get((namespace, day), 0.0) + spent_delta
            self._prune(self._dollars, day)

    async def cloud_spent(self, namespace: str) -> float:
        """Cloud dollars this key spent today (UTC), settled steps only."""
        day = int(self.clock.time() // DAY_S)
        local = self._dollars.get((namespace, day), 0.0)
        if self._redis is not None and self._shared_ok():
            value = await self._redis.get(f"{self._prefix}q:usd:{namespace}:{day}")
            return float(value or 0) + local
        return local

    async def cloud_held(self, namespace: str) -> float:
        """Cloud dollars this key's steps in flight hold today (UTC)."""
        day = int(self.clock.time() // DAY_S)
        local = self._held.get((namespace, day), 0.0)
        if self._redis is not None and self._shared_ok():
            value = await self._redis.get(f"{self._prefix}q:held:{namespace}:{day}")
            return float(value or 0) + local
        return local

    @staticmethod
    def _prune(counters: dict[tuple[str, int], Any], current: int) -> None:
        if len(counters) > 4096:
            for stale in [key for key in counters if key[1] < current]:
                del counters[stale]
