"""The seam every upstream call goes through: one `Transport` per upstream (or per replica of
the edge pool), taking a `Request` and giving a `Response`, raising only `TransportError`s.

Modules: `types` and `errors` (the seam, plain), `choose` (which transport an upstream gets:
by scheme, or its `client` setting), `proxy` (egress proxies from the environment or the
upstream's `proxy`), `tls` (the trust an https upstream is verified with),
`aiohttp_transport` (aiohttp behind the seam), `mock` (a scripted transport for tests, no
sockets). The built-in HTTP/1.1 client is router/transport/http1.
"""

from router.transport.errors import ConnectFailed, InvalidAnswer, TransportError
from router.transport.types import HeaderLookup, Request, Response, Sent, Transport

__all__ = [
    "ConnectFailed",
    "HeaderLookup",
    "InvalidAnswer",
    "Request",
    "Response",
    "Sent",
    "Transport",
    "TransportError",
]
