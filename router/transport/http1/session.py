"""The HTTP/1.1 client's pool of keep-alive connections to one origin, and its requests."""

from __future__ import annotations

import asyncio
import base64
import ssl
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from router.transport.errors import ConnectFailed, TransportError
from router.transport.http1.connection import Connection
from router.transport.http1.dial import Dial
from router.transport.http1.response import Response
from router.transport.proxy import Proxy
from router.transport.types import Request, Sent

# How soon after a request on a kept-alive connection its close reads as the upstream's idle
# close (the close was on its way as the connection was taken), not as a failure after it read.
STALE_CLOSE_S = 0.05


class _Origin:
    """Where an upstream's base URL points, and the head lines every request to it carries."""

    __slots__ = ("host", "host_line", "port", "prefix", "tls")

    def __init__(self, base_url: str, proxy: Proxy | None) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"{base_url!r}: only http:// and https:// URLs are served by this client")
        if parts.hostname is None:
            raise ValueError(f"{base_url!r}: no host")
        self.tls = parts.scheme == "https"
        self.host = parts.hostname
        default_port = 443 if self.tls else 80
        self.port = parts.port or default_port
        shown = f"[{self.host}]" if ":" in self.host else self.host
        host = shown if self.port == default_port else f"{shown}:{self.port}"
        self.host_line = f"Host: {host}\r\n"
        # Through a proxy, plain HTTP names the whole URL in the request line (absolute-form);
        # a tunnel (https) carries the request as it would go straight.
        self.prefix = f"http://{host}" if proxy is not None and not self.tls else ""
        if self.prefix and proxy is not None and proxy.authorization is not None:
            self.host_line += f"Proxy-Authorization: {proxy.authorization}\r\n"
        if parts.username is not None or parts.password is not None:
            # A URL's user:password is HTTP Basic authentication, as aiohttp and curl send it.
            pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
            self.host_line += f"Authorization: Basic {base64.b64encode(pair.encode()).decode()}\r\n"


def _path_of(url: str) -> str:
    # Percent-encoded as yarl (aiohttp) does: a space or a non-ASCII letter in a configured
    # path must not break the request line; what is encoded already stays as it is.
    parts = urlsplit(url)
    path = quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
    return f"{path}?{quote(parts.query, safe='/?%:@!$&()*+,;=-._~')}" if parts.query else path


def _checked(text: str) -> str:
    # A CR or LF in a header would let a value (a key read from a file) start a new header.
    if "\r" in text or "\n" in text:
        raise ValueError("a header name or value holds a line break")
    return text


class Http1Session:
    """A pool of keep-alive connections to one origin, at most `max_connections` open: the
    built-in transport (`send`). An https origin is verified with `tls` (the system's trust by
    default); `proxy` is the forward proxy its connections go through, if any."""

    def __init__(
        self,
        base_url: str,
        max_connections: int,
        connect_timeout: float,
        keepalive_s: float = 30.0,
        *,
        tls: ssl.SSLContext | None = None,
        proxy: Proxy | None = None,
        ca_file: Path | None = None,
    ) -> None:
        origin = self._origin = _Origin(base_url, proxy)
        if origin.tls and tls is None:
            tls = ssl.create_default_context()
        self._dial = Dial(origin.host, origin.port, connect_timeout, tls if origin.tls else None, proxy, ca_file)
        self._keepalive_s = keepalive_s
        self._slots = asyncio.Semaphore(max_connections)
        self._idle: deque[Connection] = deque()  # the most recently used last
        self._open: set[Connection] = set()
        self._heads: dict[tuple[str, str, tuple[tuple[str, str], ...]], bytes] = {}

    async def send(self, request: Request) -> Response:
        """Send; return once the answer's head is here (its body is read from the response).
        A redirect is never followed."""
        response = await self._request(request.method, request.url, request.body, request.headers, request.sent)
        if response.status == 407 and self._dial.proxy is not None:
            # The proxy's own refusal, not the upstream's answer: said as a connection not made.
            response.close()
            raise ConnectFailed(
                f"the proxy {self._dial.proxy.shown} refused the request: HTTP 407 (check its credentials)"
            )
        return response

    async def post(
        self,
        url: str,
        data: bytes,
        headers: dict[str, str],
        allow_redirects: bool = False,
        sent: Sent | None = None,
    ) -> Response:
        """Send; return once the answer's head is here (its body is read from the response).
        A redirect is never followed (`allow_redirects` is aiohttp's argument, taken for the
        caller's sake: it may only be False). `sent` is awaited once, as soon as the request is
        handed to the connection, while the upstream reads it: work the answer does not need
        runs in the time the upstream takes anyway, in the caller's task (a task of its own
        would put the request's write behind every other ready callback of a busy loop)."""
        if allow_redirects:
            raise ValueError("this client does not follow redirects")
        return await self._request("POST", url, data, headers, sent)

    @asynccontextmanager
    async def get(self, url: str, headers: dict[str, str], allow_redirects: bool = False) -> AsyncIterator[Response]:
        """GET; the answer is released on leaving. Redirects are never followed (as `post`)."""
        if allow_redirects:
            raise ValueError("this client does not follow redirects")
        response = await self._request("GET", url, b"", headers, None)
        try:
            yield response
        finally:
            response.release()

    async def close(self) -> None:
        for connection in list(self._open):
            connection.close()
        self._idle.clear()

    # The pool.

    def give_back(self, connection: Connection) -> None:
        connection.idle_since = time.monotonic()
        self._idle.append(connection)
        self._expire(connection.idle_since)
        self._slots.release()

    def free_slot(self) -> None:
        self._slots.release()

    def forget(self, connection: Connection) -> None:
        self._open.discard(connection)
        if connection in self._idle:
            self._idle.remove(connection)

    def _expire(self, now: float) -> None:
        # The oldest idle connections sit first: close those idle past the keep-alive (one
        # check a request, so a pool that shrinks in load also shrinks in sockets).
        while self._idle and now - self._idle[0].idle_since > self._keepalive_s:
            self._idle.popleft().close()

    def _take_idle(self) -> Connection | None:
        # The most recently used first: the freshest, and the rest age out (`_expire`). One
        # the upstream closed meanwhile, or with bytes or an end of stream waiting on its socket,
        # is dropped (`Connection.quiet`); one it closes as it is taken is the stale case
        # `_request` tries again.
        while self._idle:
            connection = self._idle.pop()
            if connection.quiet():
                return connection
            connection.close()
        return None

    async def _connect(self) -> Connection:
        connection = await self._dial.open(lambda: Connection(self))
        self._open.add(connection)
        return connection

    def _head(self, method: str, url: str, headers: Mapping[str, str]) -> bytes:
        key = (method, url, tuple(headers.items()))
        head = self._heads.get(key)
        if head is None:
            target = self._origin.prefix + _path_of(url)
            lines = [f"{method} {_checked(target)} HTTP/1.1\r\n", self._origin.host_line]
            lines += [f"{_checked(name)}: {_checked(value)}\r\n" for name, value in headers.items()]
            # UTF-8, not Latin-1: a value outside Latin-1 (a key pasted with a typographic
            # quote) goes as its bytes, and the upstream says what it makes of it.
            head = "".join(lines).encode("utf-8")
            if len(self._heads) < 64:  # the callers send a handful of distinct heads
                self._heads[key] = head
        return head

    async def _request(
        self, method: str, url: str, body: bytes, headers: Mapping[str, str], sent: Sent | None
    ) -> Response:
        head = self._head(method, url, headers) + b"Content-Length: %d\r\n\r\n" % len(body)
        for attempt in range(2):
            await self._slots.acquire()  # held until the answer settles (Response._settle)
            connection = self._take_idle()
            reused = connection is not None
            response: Response | None = None
            written = time.monotonic()
            try:
                if connection is None:
                    connection = await self._connect()
                response = Response(connection)
                connection.send(response, head, body)
                written = time.monotonic()  # (a send that raises: the stale case, at once)
                if sent is not None:
                    # Once, though a stale connection's request goes again: it is the same one.
                    pending = sent
                    sent = None
                    await pending()
                await response.wait_head()
                return response
            except TransportError:
                if response is None:
                    self._slots.release()  # no connection was made
                    raise
                # One retry, on a fresh connection, when a reused one closed at once, before a
                # byte of the answer came: the upstream dropped it while idle, as it was taken.
                # Later, the upstream may have read the request and begun (a crash while it
                # generates): sending it again would run, and bill, the prompt twice unseen, so
                # the failure is the caller's to see, count and fail over.
                if reused and attempt == 0 and not response.received and time.monotonic() - written < STALE_CLOSE_S:
                    continue
                raise
            except BaseException:
                # Cancelled (the client left, a timeout): the request may be half sent, so the
                # connection can never carry another.
                if response is None:
                    self._slots.release()
                else:
                    response.close()
                raise
        raise AssertionError("the loop returns or raises")
