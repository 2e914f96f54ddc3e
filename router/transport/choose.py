"""Which transport an upstream is called with, and how it leaves the gateway (its `Egress`):
the built-in HTTP/1.1 client (router/transport/http1) for http:// upstreams and aiohttp for https:// ones
by default (`client: auto`), or the one its `client` setting names; through the proxy its
`proxy` setting and the environment give (router/transport/proxy.py); an https upstream verified
against its `ca_file` or the system's trust store (router/transport/tls.py).

`egress_for` reads and checks all of it once, when the upstream is configured, so that a CA file
that cannot be read or a proxy variable that is not a proxy URL stops the gateway at start-up
with a message naming it, not at its first step; `transport_for` then makes the transport (it
needs a running loop). The edge pool makes one transport per replica, the same way.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from router.config.base import ConfigError
from router.transport.aiohttp_transport import AiohttpTransport
from router.transport.http1 import Http1Session
from router.transport.proxy import Proxy, proxy_for
from router.transport.tls import tls_context
from router.transport.types import Transport

if TYPE_CHECKING:
    from router.config.upstream import UpstreamSettings


@dataclass(frozen=True, slots=True)
class Egress:
    """How calls to one upstream leave the gateway."""

    client: str  # one of CLIENTS
    proxy: Proxy | None  # None: straight to the upstream
    tls: ssl.SSLContext | None  # for an https upstream
    ca_file: Path | None


Maker = Callable[["UpstreamSettings", Egress], Transport]


def _builtin(settings: UpstreamSettings, egress: Egress) -> Transport:
    timeout_s = settings.timeouts.connect
    return Http1Session(
        settings.base_url,
        settings.max_connections,
        timeout_s,
        tls=egress.tls,
        proxy=egress.proxy,
        ca_file=egress.ca_file,
    )


def _aiohttp(settings: UpstreamSettings, egress: Egress) -> Transport:
    timeout_s = settings.timeouts.connect
    return AiohttpTransport(settings.max_connections, timeout_s, egress.tls, egress.proxy, egress.ca_file)


# The clients an upstream's `client` setting may name (a new transport is its module and its
# line here), and the one `auto` takes for each scheme.
CLIENTS: dict[str, Maker] = {"builtin": _builtin, "aiohttp": _aiohttp}
AUTOMATIC = {"http": "builtin", "https": "aiohttp"}


def egress_for(settings: UpstreamSettings, name: str, environ: Mapping[str, str] | None = None) -> Egress:
    """The upstream's egress, from its settings and the environment (`os.environ` unless given).
    Raises ConfigError naming the setting or variable that cannot be used."""
    environ = os.environ if environ is None else environ
    https = settings.base_url.startswith("https://")
    client = AUTOMATIC["https" if https else "http"] if settings.client == "auto" else settings.client
    if client not in CLIENTS:
        known = ", ".join(["auto", *CLIENTS])
        raise ConfigError(f"upstreams.{name}.client: no client is called {client!r} (one of {known})")
    try:
        proxy = proxy_for(settings.base_url, settings.proxy, f"upstreams.{name}.proxy", environ)
        tls = tls_context(settings.ca_file, f"upstreams.{name}.ca_file") if https else None
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    return Egress(client, proxy, tls, settings.ca_file)


def transport_for(settings: UpstreamSettings, egress: Egress) -> Transport:
    """The pooled transport an upstream is called with."""
    return CLIENTS[egress.client](settings, egress)
