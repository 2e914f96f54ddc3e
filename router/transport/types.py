"""The transport seam's plain types, in httpx's shape: a `Transport` takes a `Request` and gives
back a `Response` once the answer's head is there; its body is read as it arrives.

Every upstream call goes through one `Transport` (router/transport/choose.py picks which per
upstream): the gateway's own HTTP/1.1 client (router/transport/http1), aiohttp
(router/transport/aiohttp_transport.py) or, in tests, a scripted one (router/transport/mock.py).
Each raises only the errors of router/transport/errors.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol, overload

from router.records import record

# Awaited once, as soon as the request is handed to its connection, while the upstream reads it
# (`Request.sent`).
Sent = Callable[[], Awaitable[None]]


@record(frozen=True, slots=True)
class Request:
    """One call to an upstream. Redirects are never followed, by any transport."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes = b""
    # Work the answer does not need, run in the time the upstream takes anyway (in the caller's
    # task); what it raises gives the call up.
    sent: Sent | None = None


class HeaderLookup(Protocol):
    """An answer's headers, looked up without regard to case."""

    @overload
    def get(self, name: str) -> str | None: ...
    @overload
    def get(self, name: str, default: str) -> str: ...


class Response(Protocol):
    """One answer whose head has arrived; read by one task."""

    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> HeaderLookup: ...
    @property
    def content_length(self) -> int | None: ...

    async def read_some(self) -> bytes:
        """Whatever of the body has arrived (waiting for some), b"" at its end; raises a
        `TransportError` when the answer breaks."""
        ...

    def release(self) -> None:
        """Done with the answer: its connection is kept for another call when the answer was
        read whole and cleanly, else dropped."""
        ...

    def close(self) -> None:
        """Drop the connection (an upstream generating for nobody stops)."""
        ...


class Transport(Protocol):
    """A pool of connections to one upstream."""

    async def send(self, request: Request) -> Response:
        """Send; return once the answer's head is here."""
        ...

    async def close(self) -> None: ...
