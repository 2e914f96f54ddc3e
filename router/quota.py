"""Limits per client key: requests per minute and cloud dollars per day.

Budgets per trajectory do not bound a client that starts a new session with every request;
these do, because they count by client key (its namespace), whatever the trajectory. With Redis
the counters are shared by every replica; without it (or while it is out) each process counts
alone. Requests count in fixed one-minute windows (UTC), refused ones included; cloud dollars in
UTC days, added as each step's record is written, so the step that crosses the limit completes
and the next one is refused.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import redis.exceptions

from router.clock import SYSTEM_CLOCK, Clock
from router.errors import GatewayError
from router.metrics import Metrics

log = logging.getLogger("tandem.quota")
DAY_S = 86_400

# KEYS: this minute's request counter, today's cloud dollars. ARGV: the counter's lifetime.
_ADMIT = """
local requests = redis.call('INCR', KEYS[1])
if requests == 1 then redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1])) end
return {requests, redis.call('GET', KEYS[2]) or '0'}
"""


@dataclass(frozen=True, slots=True)
class Limit:
    requests_per_minute: int | None = None
    cloud_usd_per_day: float | None = None

    @property
    def active(self) -> bool:
        return self.requests_per_minute is not None or self.cloud_usd_per_day is not None


def namespace_of_trajectory(trajectory_id: str, keyed: bool) -> str:
    """The client namespace a trajectory id belongs to (ids are `namespace:session` with keys)."""
    return trajectory_id.partition(":")[0] if keyed else ""


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

    @property
    def active(self) -> bool:
        return self._default.active or any(limit.active for limit in self._per_namespace.values())

    def limit_for(self, namespace: str) -> Limit:
        return self._per_namespace.get(namespace, self._default)

    async def admit(self, namespace: str) -> None:
        """Count a request of this key; 429 when it is over a limit."""
        limit = self.limit_for(namespace)
        if not limit.active:
            return
        now = self.clock.time()
        minute, day = int(now // 60), int(now // DAY_S)
        requests, dollars = await self._count(namespace, minute, day)
        if limit.requests_per_minute is not None and requests > limit.requests_per_minute:
            wait = max(1, math.ceil((minute + 1) * 60 - now))
            raise self._refuse(
                "requests_per_minute",
                f"this API key is over its limit of {limit.requests_per_minute} requests per minute "
                f"(client_limits); try again in {wait} s",
                wait,
            )
        if limit.cloud_usd_per_day is not None and dollars >= limit.cloud_usd_per_day:
            wait = max(1, math.ceil((day + 1) * DAY_S - now))
            raise self._refuse(
                "cloud_usd_per_day",
                f"this API key has spent ${dollars:.4f} on the cloud today, over its limit of "
                f"${limit.cloud_usd_per_day:g} a day (client_limits); the day ends (UTC) in {wait} s",
                wait,
            )

    def _refuse(self, which: str, message: str, wait: int) -> GatewayError:
        self._metrics.client_limit_refusals.labels(which).inc()
        return GatewayError(
            429, message, type="rate_limit_error", code="rate_limit_exceeded", headers={"Retry-After": str(wait)}
        )

    async def charge(self, namespace: str, cloud_usd: float) -> None:
        """Add a step's cloud dollars to its key's day."""
        if cloud_usd <= 0 or self.limit_for(namespace).cloud_usd_per_day is None:
            return
        day = int(self.clock.time() // DAY_S)
        if self._redis is not None and self._shared_ok():
            try:
                key = f"{self._prefix}q:usd:{namespace}:{day}"
                async with self._redis.pipeline(transaction=True) as pipe:
                    pipe.incrbyfloat(key, cloud_usd)
                    pipe.expire(key, 2 * DAY_S)
                    await pipe.execute()
                return
            except (redis.exceptions.RedisError, OSError) as exc:
                log.warning("client limits: Redis failed (%s); counting in this process", exc)
        self._dollars[(namespace, day)] = self._dollars.get((namespace, day), 0.0) + cloud_usd
        self._prune(self._dollars, day)

    async def cloud_spent(self, namespace: str) -> float:
        """Cloud dollars this key spent today (UTC)."""
        day = int(self.clock.time() // DAY_S)
        local = self._dollars.get((namespace, day), 0.0)
        if self._redis is not None and self._shared_ok():
            value = await self._redis.get(f"{self._prefix}q:usd:{namespace}:{day}")
            return float(value or 0) + local
        return local

    async def _count(self, namespace: str, minute: int, day: int) -> tuple[int, float]:
        if self._redis is not None and self._shared_ok():
            try:
                keys = [f"{self._prefix}q:rpm:{namespace}:{minute}", f"{self._prefix}q:usd:{namespace}:{day}"]
                requests, dollars = await self._admit(keys=keys, args=[120])
                return int(requests), float(dollars) + self._dollars.get((namespace, day), 0.0)
            except (redis.exceptions.RedisError, OSError) as exc:
                log.warning("client limits: Redis failed (%s); counting in this process", exc)
        count = self._requests.get((namespace, minute), 0) + 1
        self._requests[(namespace, minute)] = count
        self._prune(self._requests, minute)
        return count, self._dollars.get((namespace, day), 0.0)

    @staticmethod
    def _prune(counters: dict[tuple[str, int], Any], current: int) -> None:
        if len(counters) > 4096:
            for stale in [key for key in counters if key[1] < current]:
                del counters[stale]
