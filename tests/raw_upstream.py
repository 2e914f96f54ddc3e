"""An upstream that misbehaves at the HTTP level: a real aiohttp server on 127.0.0.1 whose
handlers the test writes (an answer too big, a stream that never ends an event, a 401)."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class RawUpstream:
    def __init__(self, routes: dict[tuple[str, str], Handler]) -> None:
        self.routes = routes
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="raw-upstream", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> RawUpstream:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._serve(sock), self._loop).result(10)
        return self

    async def _serve(self, sock: socket.socket) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        for (method, path), handler in self.routes.items():
            app.router.add_route(method, path, handler)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1)
        await self._runner.setup()
        await web.SockSite(self._runner, sock).start()

    def stop(self) -> None:
        runner = self._runner
        if runner is not None:
            asyncio.run_coroutine_threadsafe(runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


async def stream_bytes(request: web.Request, parts: list[bytes] | Callable[[], list[bytes]]) -> web.StreamResponse:
    """Send `parts` as a text/event-stream answer, one write each."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for part in parts() if callable(parts) else parts:
        await response.write(part)
    await response.write_eof()
    return response
