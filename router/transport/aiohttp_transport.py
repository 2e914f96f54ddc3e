"""aiohttp behind the transport seam: the client of https upstreams by default (`client: auto`).

It reuses a keep-alive connection only when nothing of an earlier exchange can still arrive on
it, as the built-in client does, since HTTP/1.1 has no request ids: whatever bytes follow a
request on a connection are read as its answer, so a byte left over from another answer (a body
after a 204, bytes past the declared length, a second answer nobody asked for) would be one
client's answer read by another. aiohttp keeps a parsed message that arrived while its
connection sat idle and hands it to the next request on that connection, so its connector here
checks a connection as it is taken from the pool: dropped unless aiohttp has nothing buffered
for it and its socket has no byte or end of stream waiting. A request whose kept connection
breaks before a byte of its answer comes goes again, once, on a new connection (the upstream
dropped the idle connection and never read it), as with the built-in client.
tests/transport_suite holds both transports to the same hostile upstream.

aiohttp's own errors never leave this module: each becomes the seam's (router/transport/errors.py).
A proxy goes with each request (`proxy`, its credentials apart as a Proxy-Authorization header,
so aiohttp never holds them in a URL it could quote); the environment is not read here (`trust_env` stays off:
router/transport/proxy.py decides, the same for both transports).
"""

from __future__ import annotations

import asyncio
import functools
import re
import ssl
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import aiohttp
from aiohttp.client_proto import ResponseHandler
from aiohttp.http import RawResponseMessage
from aiohttp.streams import StreamReader

from router.transport.errors import ConnectFailed, InvalidAnswer, TransportError
from router.transport.http1.connection import has_pending_input
from router.transport.http1.response import BODILESS
from router.transport.proxy import Proxy
from router.transport.tls import untrusted
from router.transport.types import Request, Sent

if TYPE_CHECKING:
    from aiohttp.client_reqrep import ConnectionKey
    from aiohttp.connector import Connection
    from aiohttp.tracing import Trace
    from multidict import CIMultiDictProxy


# Where aiohttp's parser quotes the bytes it refused (`b'...'`, to the end of its message).
_QUOTED = re.compile(r"""\s*(?:\bb'|\bb"|\bbytearray\().*""", re.DOTALL)


def unquoted(message: str) -> str:
    """aiohttp's parser message without the bytes it quotes, on one line. Those bytes may be
    another request's: bytes an upstream sends past an answer's end after the connection was
    taken for the next request are read as that request's answer (HTTP/1.1 has no request ids),
    and an error quoting them would hand them to the wrong client. The kind of error is kept."""
    kept = " ".join(_QUOTED.sub("", message).split()).rstrip(":")
    return kept or "unreadable bytes"


class _Taken:
    """The idle connection a request was given (`QuietConnector._get`), if it was one."""

    __slots__ = ("protocol",)

    def __init__(self) -> None:
        self.protocol: _Handler | None = None

    def stale(self) -> bool:
        """Whether the request went on a kept connection that sent nothing back before it broke:
        the upstream closed it while it sat idle and never read the request."""
        return self.protocol is not None and not self.protocol.received


# Set by `send` for each attempt, filled in by the connector in the same task (or in the task
# `_call_then` starts, which shares the holder).
_TAKEN: ContextVar[_Taken | None] = ContextVar("tandem_aiohttp_taken", default=None)


def quiet(protocol: ResponseHandler) -> bool:
    """Whether an idle aiohttp connection may carry a request: open, nothing parsed or held for
    it since its last answer (`should_close` counts a queued message, a tail, an error, an
    unfinished body, `Connection: close`), and no byte or end of stream on its socket."""
    transport = protocol.transport
    if transport is None or transport.is_closing() or protocol.should_close:
        return False
    sock = transport.get_extra_info("socket")
    return sock is None or not has_pending_input(sock.fileno())


class _Handler(ResponseHandler):
    """aiohttp's connection protocol, with three changes, as the HTTP/1.1 client does. A 204 or
    304 closes its connection once read (aiohttp keeps it, and the body a server sends after one
    anyway, arriving later, was the next request's answer). So does an answer that comes while
    the request is still being written (the upstream did not read it all; what it makes of the
    rest is unknown). And an answer's body fails when the bytes after its head are not valid
    HTTP (bad chunking, say): aiohttp's own closes the connection and fails its next read, not
    the body being read, which waited for its timeout."""

    received = False  # a byte came since the connection was last taken from the pool

    def feed_data(self, data: tuple[RawResponseMessage, StreamReader], size: int = 0) -> None:
        if data[0].code in BODILESS:
            self.force_close()
        super().feed_data(data, size)

    def data_received(self, data: bytes) -> None:
        if data:
            self.received = True
        transport = self.transport
        if transport is not None and transport.get_write_buffer_size():
            self.force_close()  # an answer before the request was all written
        body = self._payload
        super().data_received(data)
        failure = self.exception()
        if failure is not None and body is not None and not body.is_eof() and body.exception() is None:
            said = unquoted(str(failure))
            error = aiohttp.ClientPayloadError(f"the answer's body is not valid HTTP/1.1: {said}")
            body.set_exception(error)
            # The same bytes may have ended a chunk before the fault, which woke the body's reader
            # with no data: it goes on to wait again without reading the error (aiohttp's
            # `readany` checks it only before its loop), and would wait for its timeout. Set again
            # once it waits, the error wakes it.
            asyncio.get_running_loop().call_soon(body.set_exception, error)


class QuietConnector(aiohttp.TCPConnector):
    """aiohttp's connector, taking an idle connection only when it is `quiet`.

    aiohttp checks an idle connection for being open and within its keep-alive, not for bytes
    that came while it was idle. `_get` (aiohttp's own step that takes one from the pool, as in
    the version constraints.txt pins) is wrapped: a connection that is not quiet is closed and
    the next tried. If aiohttp changes that step, tests/transport_suite fails for this connector.
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._factory = cast("functools.partial[ResponseHandler]", functools.partial(_Handler, loop=self._loop))

    async def _get(self, key: ConnectionKey, traces: list[Trace]) -> Connection | None:
        while (connection := await super()._get(key, traces)) is not None:
            protocol = connection.protocol
            if protocol is not None and quiet(protocol):
                taken = _TAKEN.get()
                if taken is not None and isinstance(protocol, _Handler):
                    protocol.received = False
                    taken.protocol = protocol
                return connection
            connection.close()  # released as "should close": its socket is closed
        return None


class AiohttpResponse:
    """aiohttp's answer behind the seam: its errors said as the seam's."""

    __slots__ = ("_response", "content_length", "headers", "status")

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status = response.status
        self.headers: CIMultiDictProxy[str] = response.headers
        self.content_length = response.content_length

    async def read_some(self) -> bytes:
        try:
            return await self._response.content.readany()
        except aiohttp.ClientError as exc:
            raise TransportError(f"{type(exc).__name__}: {unquoted(str(exc))}") from exc

    def release(self) -> None:
        self._response.release()

    def close(self) -> None:
        self._response.close()


def _closed_if_answered(posting: asyncio.Future[aiohttp.ClientResponse]) -> None:
    """A call given up after it was sent: its answer, if one came meanwhile, is closed."""
    if not posting.cancelled() and posting.exception() is None:
        posting.result().close()


class AiohttpTransport:
    """A pool of keep-alive connections (aiohttp's) to one upstream."""

    def __init__(
        self,
        max_connections: int,
        connect_timeout: float,
        tls: ssl.SSLContext | None = None,
        proxy: Proxy | None = None,
        ca_file: Path | None = None,
    ) -> None:
        connector = QuietConnector(
            limit=max_connections, keepalive_timeout=30, ttl_dns_cache=300, ssl=tls if tls is not None else True
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout),
            # The upstream's own error bodies are relayed; never raise on status.
            raise_for_status=False,
            skip_auto_headers=("User-Agent",),
        )
        self._connect_timeout = connect_timeout
        self._proxy = proxy
        self._ca_file = ca_file
        self._via: dict[str, Any] = {}
        if proxy is not None:
            self._via["proxy"] = proxy.shown
            if proxy.authorization is not None:
                # aiohttp sends `proxy_headers` with CONNECT only: a plain-HTTP request through
                # the proxy carries the header itself (`_call`).
                self._via["proxy_headers"] = {"Proxy-Authorization": proxy.authorization}
        self._authorization = proxy.authorization if proxy is not None else None

    async def send(self, request: Request) -> AiohttpResponse:
        sent = request.sent
        for attempt in range(2):
            taken = _Taken()
            token = _TAKEN.set(taken)
            try:
                response = await (self._call(request) if sent is None else self._call_then(request, sent))
                break
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
                # One retry, on a fresh connection, when a kept one broke before a byte of the
                # answer came (as the built-in client does). The work run once the request was
                # written ran: the request that goes again is the same one.
                if attempt == 0 and taken.stale() and not isinstance(exc, aiohttp.ClientConnectorError):
                    sent = None
                    continue
                raise self._said(exc) from exc
            except aiohttp.ClientError as exc:
                raise self._said(exc) from exc
            except TimeoutError as exc:  # aiohttp's connect timeout (sock_connect)
                raise ConnectFailed(f"no connection {self._where()}within {self._connect_timeout:g} s") from exc
            finally:
                _TAKEN.reset(token)  # the holder (and the connection it names) goes with the call
        if response.status == 407 and self._proxy is not None:
            # The proxy's own refusal (plain HTTP through it), not the upstream's answer.
            response.close()
            raise ConnectFailed(f"the proxy {self._proxy} refused the request: HTTP 407 (check its credentials)")
        return AiohttpResponse(response)

    async def close(self) -> None:
        await self._session.close()

    def _call(self, request: Request) -> Any:
        headers = request.headers
        if self._authorization is not None and request.url.startswith("http://"):
            headers = {**headers, "Proxy-Authorization": self._authorization}
        return self._session.request(
            request.method,
            request.url,
            data=request.body or None,
            headers=headers,
            allow_redirects=False,
            **self._via,
        )

    async def _call_then(self, request: Request, sent: Sent) -> aiohttp.ClientResponse:
        # aiohttp has no hook once the request is written: its call goes in a task, started
        # before `sent` runs (one turn of the loop), and given up if `sent` fails.
        posting: asyncio.Future[aiohttp.ClientResponse] = asyncio.ensure_future(self._call(request))
        try:
            await asyncio.sleep(0)
            await sent()
        except BaseException:
            posting.cancel()
            posting.add_done_callback(_closed_if_answered)
            raise
        return await posting

    def _where(self) -> str:
        return "" if self._proxy is None else f"through the proxy {self._proxy.shown} "

    def _said(self, exc: aiohttp.ClientError) -> TransportError:
        """aiohttp's error as the seam's, in words that name no credential."""
        if isinstance(exc, aiohttp.ClientConnectorCertificateError):
            certificate_error = exc.certificate_error
            if isinstance(certificate_error, ssl.SSLCertVerificationError):
                return ConnectFailed(untrusted(certificate_error, self._ca_file))
            return ConnectFailed(f"the upstream's TLS certificate is not trusted: {certificate_error}")
        if isinstance(exc, aiohttp.ConnectionTimeoutError):
            return ConnectFailed(f"no connection {self._where()}within {self._connect_timeout:g} s")
        if isinstance(exc, aiohttp.ClientHttpProxyError):
            return ConnectFailed(f"the proxy {self._proxy} refused the tunnel: HTTP {exc.status} {exc.message}")
        if isinstance(exc, aiohttp.ClientProxyConnectionError):
            return ConnectFailed(f"cannot connect to the proxy {self._proxy}: {exc.os_error}", exc.os_error)
        if isinstance(exc, aiohttp.ClientConnectorError):
            return ConnectFailed(f"{exc.os_error or exc}", exc.os_error)
        if isinstance(exc, aiohttp.ClientResponseError):
            # aiohttp's parser refusing the answer (a bad status line or header): raise_for_status
            # is off, so this is never a status; the upstream answered, badly.
            return InvalidAnswer(f"the answer is not valid HTTP/1.1: {unquoted(exc.message)}")
        return TransportError(f"{type(exc).__name__}: {unquoted(str(exc))}")
