"""Egress proxies: which proxy, if any, a call to an upstream goes through.

On-premises sites often reach the internet only through a forward proxy. An upstream's `proxy`
setting decides: `env` (the default) reads the environment as curl and most tools do,
`https_proxy`/`HTTPS_PROXY` for an https upstream, `http_proxy`/`HTTP_PROXY` for an http one (the
lower-case name first), then `all_proxy`/`ALL_PROXY` when it names an http:// proxy, except for a
loopback host (localhost, 127.0.0.0/8, ::1: a local vLLM is
never sent through the site's proxy) and what `no_proxy`/`NO_PROXY` names; `direct` never uses
one; a URL (`http://[user:password@]host:port`) is that proxy for this upstream, whatever the
environment says.

Both transports use a proxy the same way: a tunnel (CONNECT) for an https upstream, the
absolute-form request line for an http one. Credentials in a proxy's URL go as
Proxy-Authorization (Basic) and nowhere else: `Proxy` keeps them out of its repr and of `shown`,
which is what messages and logs name.
"""

from __future__ import annotations

import base64
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit


@dataclass(frozen=True, slots=True)
class Proxy:
    """One forward proxy; `login` and `password` are never shown."""

    host: str
    port: int
    login: str = field(default="", repr=False)
    password: str = field(default="", repr=False)

    @property
    def shown(self) -> str:
        """The proxy as messages name it: its address, never its credentials."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def authorization(self) -> str | None:
        """The Proxy-Authorization header's value, when the proxy's URL has credentials."""
        if not self.login and not self.password:
            return None
        pair = f"{self.login}:{self.password}".encode()
        return f"Basic {base64.b64encode(pair).decode()}"

    def __str__(self) -> str:
        return self.shown


def parse_proxy(url: str, where: str) -> Proxy:
    """A proxy URL read; ValueError names `where` it was set, never the URL (it may hold a
    password)."""
    text = url.strip()
    if "://" not in text:
        text = f"http://{text}"  # `host:port`, as curl takes it
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"{where} is not a proxy URL (http://[user:password@]host:port)") from exc
    if parts.scheme != "http":
        raise ValueError(
            f"{where}: a {parts.scheme}:// proxy is not supported; use an http:// proxy (https upstreams go through "
            "it in a CONNECT tunnel), or set the upstream's proxy to direct"
        )
    if not parts.hostname:
        raise ValueError(f"{where} names no proxy host (http://[user:password@]host:port)")
    return Proxy(parts.hostname, port or 80, unquote(parts.username or ""), unquote(parts.password or ""))


def is_loopback(host: str) -> bool:
    """Whether `host` is this machine: localhost (and names under it) or a loopback address."""
    name = host.lower().rstrip(".").strip("[]")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def bypassed(host: str, port: int, no_proxy: str) -> bool:
    """Whether NO_PROXY names `host`: `*` (every host), a name (and every name under it, with or
    without a leading dot), an address, an address range (10.0.0.0/8), each optionally with
    `:port`."""
    name = host.lower().rstrip(".").strip("[]")
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        address = None
    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        entry, _, entry_port = _split_port(entry)
        if entry_port and entry_port != str(port):
            continue
        if address is not None:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass
            continue
        entry = entry.lstrip(".").rstrip(".")
        if entry and (name == entry or name.endswith("." + entry)):
            return True
    return False


def _split_port(entry: str) -> tuple[str, str, str]:
    # "[::1]:8000", "host:8000", "10.0.0.0/8", "::1" (an IPv6 address has colons and no port).
    if entry.startswith("["):
        inside, _, rest = entry[1:].partition("]")
        return inside, ":", rest.lstrip(":")
    if entry.count(":") == 1:
        return entry.partition(":")
    return entry, "", ""


def _from_environment(scheme: str, environ: Mapping[str, str]) -> tuple[str, str] | None:
    for name in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY"):
        value = environ.get(name, "").strip()
        if value:
            return name, value
    # Then `all_proxy`, as curl reads it, when it names an http:// proxy. A SOCKS one there is
    # another tool's (ssh, git, a browser's): passed over rather than refused, so that a setting
    # meant for them does not stop the gateway (`tandem check` shows the upstream reached
    # directly).
    for name in ("all_proxy", "ALL_PROXY"):
        value = environ.get(name, "").strip()
        if value:
            return (name, value) if "://" not in value or value.lower().startswith("http://") else None
    return None


def proxy_for(base_url: str, setting: str, where: str, environ: Mapping[str, str]) -> Proxy | None:
    """The proxy calls to `base_url` go through (None: direct), by the upstream's `proxy`
    setting (`where` names it in errors) and the environment."""
    if setting == "direct":
        return None
    if setting != "env":
        return parse_proxy(setting, where)
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if is_loopback(host):
        return None
    found = _from_environment(parts.scheme, environ)
    if found is None:
        return None
    no_proxy = environ.get("no_proxy", "") or environ.get("NO_PROXY", "")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if bypassed(host, port, no_proxy):
        return None
    name, value = found
    return parse_proxy(value, f"the {name} environment variable")
