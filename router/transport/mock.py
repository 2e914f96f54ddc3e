"""A transport with no sockets, for tests (in the manner of httpx's `MockTransport`): each request
is handed to a function the test writes, which answers it with a `MockResponse` or raises one of
the seam's errors, as a real upstream and client would.

It stands where a pooled transport stands (`Engine(settings, transports=…)`), so a test drives
the whole engine in process and asserts what each upstream received.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Literal, overload

from router.transport.errors import TransportError
from router.transport.types import Request

Handler = Callable[[Request], Awaitable["MockResponse"]]
# How the body ends after its parts: "" (cleanly), "cut" (the connection breaks, as a real
# transport says it: TransportError), "stall" (the upstream goes quiet, for ever).
End = Literal["", "cut", "stall"]


class _Headers:
    __slots__ = ("_values",)

    def __init__(self, values: dict[str, str]) -> None:
        self._values = {name.lower(): value for name, value in values.items()}

    @overload
    def get(self, name: str) -> str | None: ...
    @overload
    def get(self, name: str, default: str) -> str: ...
    def get(self, name: str, default: str | None = None) -> str | None:
        return self._values.get(name.lower(), default)


class MockResponse:
    """An answer whose body is `parts`, each arriving on a later turn of the loop, as from a
    socket; `hang` sends no part at all, ever."""

    def __init__(
        self,
        status: int,
        headers: dict[str, str] | None = None,
        parts: Iterable[bytes] = (),
        end: End = "",
        hang: bool = False,
    ) -> None:
        self.status = status
        self.headers = _Headers(headers or {})
        self.content_length: int | None = None
        self._parts = deque(parts)
        self._end = end
        self._hang = hang
        self.released = False
        self.closed = False

    async def read_some(self) -> bytes:
        if self._hang or (not self._parts and self._end == "stall"):
            await asyncio.Event().wait()
        await asyncio.sleep(0)  # a part arrives later: let the loop run, as a socket would
        if not self._parts and self._end == "cut":
            raise TransportError("the upstream closed the connection in the middle of the answer (scripted)")
        return self._parts.popleft() if self._parts else b""

    def release(self) -> None:
        self.released = True

    def close(self) -> None:
        self.closed = True


class MockTransport:
    """Answers every request with `handler`."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self.closed = False

    async def send(self, request: Request) -> MockResponse:
        return await self._handler(request)

    async def close(self) -> None:
        self.closed = True
