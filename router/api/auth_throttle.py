"""Failed key checks counted per client address, so that keys cannot be guessed at speed.

Past `auth_throttle.max_failures` failed checks (a missing or wrong client or admin key) from
one address within `auth_throttle.window_s`, every request of that address that needs a key is
refused with 429 and `Retry-After` until `window_s` has passed since the last failure that
counted, whatever key it carries: a right key must not tell itself apart from a wrong one while
the address is refused. Each failure counts in `tandem_auth_failures_total{key_kind}`, each
refusal in `tandem_auth_throttled_total{key_kind}`, and a log line says when an address starts
to be refused (its address and count, never a key).

With Redis (`redis_url`), each failure is also counted there, by address, for every replica and
worker (`SharedFailures`): a process that sees the shared count reach the bound refuses the
address too, so an address tries at most the bound plus one key per other process (plus those
in flight while the count is read), not the bound per process. The check itself reads no Redis:
a process learns of the others' failures when an address fails at it. While Redis is out, each
process counts alone. The addresses remembered are bounded (`MAX_TRACKED`, oldest forgotten first).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import redis.exceptions
from starlette.requests import Request

from router.api.client_address import Network, client_address
from router.clock import SYSTEM_CLOCK, Clock
from router.config.limits import AuthThrottleSettings
from router.errors import GatewayError
from router.metrics.core import Metrics

log = logging.getLogger("tandem.auth")
KeyKind = Literal["client", "admin"]
MAX_TRACKED = 100_000


# A failure counted in Redis. KEYS: the address's counter. ARGV: the window (ms), the bound.
# The window starts at the first failure and, once the bound is reached, again at each failure
# (the refusal lasts the window since the last failure that counted, as in a process).
_COUNT = """
local failures = redis.call('INCR', KEYS[1])
if failures == 1 or failures >= tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return failures
"""


class SharedFailures:
    """Failed key checks counted by address in Redis, for every process that shares it."""

    def __init__(self, redis_client: Any, prefix: str, shared_ok: Callable[[], bool] = lambda: True) -> None:
        self._count = redis_client.register_script(_COUNT)
        self._prefix = prefix
        # False while the trajectory store knows Redis is out: count in the process only.
        self._shared_ok = shared_ok
        self._counting: set[asyncio.Task[None]] = set()

    def count(self, address: str, window_s: float, bound: int, counted: Callable[[int], None]) -> None:
        """Count a failure of `address`, off the request's path; `counted` gets the shared count."""
        if not self._shared_ok():
            return
        task = asyncio.get_running_loop().create_task(self._add(address, window_s, bound, counted))
        self._counting.add(task)
        task.add_done_callback(self._counting.discard)

    async def _add(self, address: str, window_s: float, bound: int, counted: Callable[[int], None]) -> None:
        try:
            failures = await self._count(keys=[f"{self._prefix}authfail:{address}"], args=[int(window_s * 1000), bound])
        except (redis.exceptions.RedisError, OSError) as exc:
            log.warning("auth throttle: Redis failed (%s); this failure counts in this process only", exc)
            return
        counted(int(failures))


@dataclass(slots=True)
class _Failures:
    since: float  # when the window of these failures began
    count: int
    refused_until: float = 0.0


class AuthThrottle:
    def __init__(
        self,
        settings: AuthThrottleSettings,
        trusted_proxies: Sequence[Network],
        metrics: Metrics,
        clock: Clock = SYSTEM_CLOCK,
        shared: SharedFailures | None = None,
    ) -> None:
        self._shared = shared
        self._max_failures = settings.max_failures
        self._window_s = settings.window_s
        self._trusted = tuple(trusted_proxies)
        self._metrics = metrics
        self.clock = clock
        self._failures: OrderedDict[str, _Failures] = OrderedDict()

    @property
    def counting(self) -> bool:
        """Whether any address has failures counted (else `check` has nothing to refuse)."""
        return bool(self._failures)

    def check(self, request: Request, kind: KeyKind) -> None:
        """Refuse (429) a request from an address that failed too often; before its key is read."""
        if not self._failures:  # nobody failed lately: no address to find
            return
        failures = self._failures.get(client_address(request, self._trusted))
        if failures is None:
            return
        now = self.clock.time()
        if failures.refused_until > now:
            self._metrics.auth_throttled.labels(kind).inc()
            wait = max(1, math.ceil(failures.refused_until - now))
            raise GatewayError(
                429,
                f"too many requests with a missing or wrong API key from this address; try again in {wait} s",
                type="rate_limit_error",
                code="too_many_auth_failures",
                headers={"Retry-After": str(wait)},
            )

    def failed(self, request: Request, kind: KeyKind) -> None:
        """A key check failed: count it against the request's address."""
        self._metrics.auth_failures.labels(kind).inc()
        if self._max_failures == 0:
            return
        address = client_address(request, self._trusted)
        now = self.clock.time()
        failures = self._failures.pop(address, None)
        if failures is None or now - failures.since >= self._window_s:
            failures = _Failures(since=now, count=0)
        failures.count += 1
        self._failures[address] = failures  # the most recent last: the oldest is forgotten first
        if failures.count >= self._max_failures:
            self._refuse(address, kind, failures, failures.count, now)
        self._forget_old(now)
        if self._shared is not None:
            self._shared.count(
                address, self._window_s, self._max_failures, lambda count: self._counted(address, kind, count)
            )

    def _counted(self, address: str, kind: KeyKind, count: int) -> None:
        """The shared count of `address`'s failures, every process's: refused here too past the bound."""
        if count < self._max_failures:
            return
        now = self.clock.time()
        failures = self._failures.pop(address, None) or _Failures(since=now, count=0)
        self._failures[address] = failures
        self._refuse(address, kind, failures, count, now)

    def _refuse(self, address: str, kind: KeyKind, failures: _Failures, count: int, now: float) -> None:
        if failures.refused_until <= now:
            log.warning(
                "%d failed %s key checks from %s within %g s; refusing its requests for %g s",
                count,
                kind,
                address,
                self._window_s,
                self._window_s,
            )
        failures.refused_until = now + self._window_s

    def _forget_old(self, now: float) -> None:
        while self._failures:
            oldest_address, oldest = next(iter(self._failures.items()))
            stale = now - oldest.since >= self._window_s and oldest.refused_until <= now
            if not stale and len(self._failures) <= MAX_TRACKED:
                return
            del self._failures[oldest_address]
