"""The pooled client each upstream is called with: the gateway's own HTTP/1.1 client for
http:// (router/http1), aiohttp for https:// (TLS, proxies).

Both reuse a keep-alive connection only when nothing of an earlier exchange can still arrive on
it, since HTTP/1.1 has no request ids: whatever bytes follow a request on a connection are read
as its answer, so a byte left over from another answer (a body after a 204, bytes past the
declared length, a second answer nobody asked for) would be one client's answer read by another.
The HTTP/1.1 client decides that itself (router/http1/connection.py); aiohttp keeps a parsed
message that arrived while its connection sat idle and hands it to the next request on that
connection, so its connector here checks a connection as it is taken from the pool: dropped
unless aiohttp has nothing buffered for it and its socket has no byte or end of stream waiting.
tests/transport_suite holds both to the same hostile upstream.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, cast

import aiohttp
from aiohttp.client_proto import ResponseHandler
from aiohttp.http import RawResponseMessage
from aiohttp.streams import StreamReader

from router.http1 import Http1Session
from router.http1.connection import has_pending_input
from router.http1.response import BODILESS

if TYPE_CHECKING:
    from aiohttp.client_reqrep import ConnectionKey
    from aiohttp.connector import Connection
    from aiohttp.tracing import Trace

    from router.config.upstream import UpstreamSettings

Session = aiohttp.ClientSession | Http1Session


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

    def feed_data(self, data: tuple[RawResponseMessage, StreamReader], size: int = 0) -> None:
        if data[0].code in BODILESS:
            self.force_close()
        super().feed_data(data, size)

    def data_received(self, data: bytes) -> None:
        transport = self.transport
        if transport is not None and transport.get_write_buffer_size():
            self.force_close()  # an answer before the request was all written
        body = self._payload
        super().data_received(data)
        failure = self.exception()
        if failure is not None and body is not None and not body.is_eof() and body.exception() is None:
            body.set_exception(aiohttp.ClientPayloadError(f"the answer's body is not valid HTTP/1.1: {failure!r}"))


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
                return connection
            connection.close()  # released as "should close": its socket is closed
        return None


def http1_session(settings: UpstreamSettings) -> Http1Session:
    return Http1Session(settings.base_url, settings.max_connections, settings.timeouts.connect)


def aiohttp_session(settings: UpstreamSettings) -> aiohttp.ClientSession:
    connector = QuietConnector(limit=settings.max_connections, keepalive_timeout=30, ttl_dns_cache=300)
    return aiohttp.ClientSession(
        connector=connector,
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=settings.timeouts.connect),
        # The upstream's own error bodies are relayed; never raise on status.
        raise_for_status=False,
        skip_auto_headers=("User-Agent",),
    )


def session_for(settings: UpstreamSettings) -> Session:
    """The pooled client for an upstream: the lean HTTP/1.1 one for http://, aiohttp for TLS."""
    if settings.base_url.startswith("http://"):
        return http1_session(settings)
    return aiohttp_session(settings)
