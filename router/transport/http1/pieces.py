"""An answer's body as an async iterator of its parts: a module of its own, since mypyc (which
compiles `response`) compiles no async generator."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable


async def pieces(read_some: Callable[[], Awaitable[bytes]]) -> AsyncIterator[bytes]:
    """What `read_some` returns, until it returns b"" (the end of the body)."""
    while part := await read_some():
        yield part
