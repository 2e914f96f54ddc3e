"""The upstream transports the suite runs over: each builds the pooled client an `Upstream`
calls with, from the upstream's settings, exactly as the gateway builds it
(router/upstream_pool.py). A new transport is one more entry here."""

from __future__ import annotations

from collections.abc import Callable

from router.config.upstream import UpstreamSettings
from router.upstream_pool import Session, aiohttp_session, http1_session

TRANSPORTS: dict[str, Callable[[UpstreamSettings], Session]] = {
    "http1": http1_session,  # the gateway's own client, for http:// upstreams
    "aiohttp": aiohttp_session,  # the https client, run here over plain TCP (same pool, no TLS)
}
