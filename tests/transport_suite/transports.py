"""The upstream transports the suite runs over, by the `client` setting that chooses each for an
upstream (router/transport/choose.py), so each is built exactly as the gateway builds it. A new
transport is one more entry here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from router.config.limits import LimitSettings
from router.config.upstream import UpstreamSettings
from router.transport import Transport
from router.transport.choose import egress_for, transport_for
from router.upstream import Upstream

TRANSPORTS = (
    "builtin",  # the gateway's own HTTP/1.1 client (http:// by default)
    "aiohttp",  # https:// by default; over plain TCP here too (same pool)
)


async def started(client: str, on_limit: Callable[[str], None] | None = None, **settings: Any) -> Upstream:
    """An upstream called with `client`, started (its pool open)."""
    upstream = Upstream(
        "edge",
        UpstreamSettings(**{"model": "edge-model", **settings, "client": client}),
        LimitSettings(),
        on_limit or (lambda limit: None),
    )
    await upstream.start()
    return upstream


def made(client: str, **settings: Any) -> Transport:
    """The bare transport `client` is, for an upstream of `settings`."""
    upstream = UpstreamSettings(**{"model": "edge-model", **settings, "client": client})
    return transport_for(upstream, egress_for(upstream, "edge"))
