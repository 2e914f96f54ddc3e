"""Failed key checks counted per client address, so that keys cannot be guessed at speed.

Past `auth_throttle.max_failures` failed checks (a missing or wrong client or admin key) from
one address within `auth_throttle.window_s`, every request of that address that needs a key is
refused with 429 and `Retry-After` until `window_s` has passed since the last failure that
counted, whatever key it carries: a right key must not tell itself apart from a wrong one while
the address is refused. Each failure counts in `tandem_auth_failures_total{key_kind}`, each
refusal in `tandem_auth_throttled_total{key_kind}`, and a log line says when an address starts
to be refused (its address and count, never a key).

Counted in each process (a gateway with N workers lets an address try N times as many keys).
The addresses remembered are bounded (`MAX_TRACKED`, oldest forgotten first).
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from starlette.requests import Request

from router.api.client_address import Network, client_address
from router.clock import SYSTEM_CLOCK, Clock
from router.config.limits import AuthThrottleSettings
from router.errors import GatewayError
from router.metrics.core import Metrics

log = logging.getLogger("tandem.auth")
KeyKind = Literal["client", "admin"]
MAX_TRACKED = 100_000


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
    ) -> None:
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
            if failures.refused_until <= now:
                log.warning(
                    "%d failed %s key checks from %s within %g s; refusing its requests for %g s",
                    failures.count,
                    kind,
                    address,
                    self._window_s,
                    self._window_s,
                )
            failures.refused_until = now + self._window_s
        self._forget_old(now)

    def _forget_old(self, now: float) -> None:
        while self._failures:
            oldest_address, oldest = next(iter(self._failures.items()))
            stale = now - oldest.since >= self._window_s and oldest.refused_until <= now
            if not stale and len(self._failures) <= MAX_TRACKED:
                return
            del self._failures[oldest_address]
