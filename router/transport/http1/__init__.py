"""A lean HTTP/1.1 client for plain-HTTP upstreams (the local vLLM edge, above all).

Every step calls an upstream, and aiohttp's general-purpose client spent a quarter of a short
step's CPU in the gateway (~100 µs: request and response objects, its stream reader, cookie and
redirect handling, payload wrappers) and ~0.3 ms more than a bare client on a 400 KB body
(benchmarks/longrun/README.md). An upstream call needs much less: one origin, POST and GET, a keep-alive
pool of at most `max_connections`, answers framed by Content-Length, chunks or the connection's
end (httptools' parser, the one uvicorn serves with), gzip or deflate answers from servers that
compress though asked not to, read back-pressure, TLS for https upstreams, a forward proxy
(router/transport/proxy.py), and the transport seam's three errors (router/transport/errors.py):
the connection could not be made (`ConnectFailed`), the upstream's bytes are not a valid answer
(`InvalidAnswer`), or it broke (`TransportError`).

A connection carries a second request only after a clean, complete, valid answer, and only if it
is still quiet when taken from the pool (router/transport/http1/connection.py says what counts): the
bytes one request reads are never another's.

`Http1Session` is a `router.transport.Transport` (`send`), and its `Response` the seam's
response; by default it serves http:// upstreams, and https ones whose `client` is `builtin`
(router/transport/choose.py).

Modules: `response` (one answer: parsing, reading), `connection` (one socket: its reuse
verdict and idle check), `dial` (opening one: straight, through a proxy, TLS), `session` (the
pool and the requests).
"""

from router.transport.http1.response import HIGH_WATER, INFLATE_PIECE, MAX_HEAD_BYTES, Headers, Response
from router.transport.http1.session import Http1Session

__all__ = [
    "HIGH_WATER",
    "INFLATE_PIECE",
    "MAX_HEAD_BYTES",
    "Headers",
    "Http1Session",
    "Response",
]
