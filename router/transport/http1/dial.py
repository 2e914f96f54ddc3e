"""How the HTTP/1.1 client reaches its upstream: straight, or through a forward proxy (the
absolute-form request line for an http upstream, a CONNECT tunnel for an https one), with TLS
for an https upstream; each failure said as one `ConnectFailed` that names where it was going
(a proxy by its address only: its credentials are never in a message)."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Callable
from pathlib import Path

from router.transport.errors import ConnectFailed
from router.transport.http1.connection import Connection
from router.transport.proxy import Proxy
from router.transport.tls import untrusted

# A proxy's answer to CONNECT is a status line and a few headers; more is not a proxy.
MAX_TUNNEL_HEAD = 16 * 1024


class Dial:
    """Opens connections to one origin (`host`, `port`), the way its settings say."""

    __slots__ = ("ca_file", "host", "port", "proxy", "timeout_s", "tls", "where")

    def __init__(
        self,
        host: str,
        port: int,
        timeout_s: float,
        tls: ssl.SSLContext | None = None,
        proxy: Proxy | None = None,
        ca_file: Path | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.timeout_s = timeout_s
        self.tls = tls
        self.proxy = proxy
        self.ca_file = ca_file
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self.where = shown if proxy is None else f"{shown} through the proxy {proxy.shown}"

    @property
    def absolute_form(self) -> bool:
        """Whether requests name the whole URL in their request line (plain HTTP through a
        proxy), not just the path."""
        return self.proxy is not None and self.tls is None

    async def open(self, factory: Callable[[], Connection]) -> Connection:
        loop = asyncio.get_running_loop()
        proxy = self.proxy
        try:
            async with asyncio.timeout(self.timeout_s):
                if proxy is None:
                    hostname = self.host if self.tls is not None else None
                    _, connection = await loop.create_connection(
                        factory, self.host, self.port, ssl=self.tls, server_hostname=hostname
                    )
                elif self.tls is None:
                    _, connection = await loop.create_connection(factory, proxy.host, proxy.port)
                else:
                    sock = await self._tunnel(proxy)
                    try:
                        _, connection = await loop.create_connection(
                            factory, sock=sock, ssl=self.tls, server_hostname=self.host
                        )
                    except BaseException:
                        sock.close()
                        raise
        except TimeoutError as exc:
            raise ConnectFailed(f"no connection to {self.where} within {self.timeout_s:g} s") from exc
        except ssl.SSLCertVerificationError as exc:
            raise ConnectFailed(f"{untrusted(exc, self.ca_file)} ({self.where})", exc) from exc
        except OSError as exc:
            raise ConnectFailed(f"cannot connect to {self.where}: {exc}", exc) from exc
        return connection

    async def _tunnel(self, proxy: Proxy) -> socket.socket:
        """A socket to the proxy, through which bytes now go to the origin (CONNECT)."""
        loop = asyncio.get_running_loop()
        sock = await _connected(proxy.host, proxy.port)
        try:
            target = f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
            head = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n"
            if proxy.authorization is not None:
                head += f"Proxy-Authorization: {proxy.authorization}\r\n"
            await loop.sock_sendall(sock, (head + "\r\n").encode("latin-1"))
            answer = b""
            while b"\r\n\r\n" not in answer:
                data = await loop.sock_recv(sock, 4096)
                if not data:
                    raise ConnectFailed(f"the proxy {proxy.shown} closed the connection before answering CONNECT")
                answer += data
                if len(answer) > MAX_TUNNEL_HEAD:
                    raise ConnectFailed(f"the proxy {proxy.shown} answered CONNECT with an endless head")
            head_bytes, _, rest = answer.partition(b"\r\n\r\n")
            status_line = head_bytes.split(b"\r\n", 1)[0].decode("latin-1")
            words = status_line.split(" ", 2)
            if len(words) < 2 or not words[0].startswith("HTTP/1.") or not words[1].startswith("2"):
                raise ConnectFailed(f"the proxy {proxy.shown} refused the tunnel to {target}: {status_line!r}")
            if rest:
                raise ConnectFailed(f"the proxy {proxy.shown} sent bytes of its own after opening the tunnel")
        except BaseException:
            sock.close()
            raise
        return sock


async def _connected(host: str, port: int) -> socket.socket:
    """A non-blocking socket connected to `host`, each of its addresses tried in turn."""
    loop = asyncio.get_running_loop()
    failure: OSError | None = None
    for family, kind, proto, _, address in await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, address)
        except OSError as exc:
            sock.close()
            failure = exc
            continue
        except BaseException:
            sock.close()
            raise
        return sock
    raise failure or OSError(f"no address for {host}")
