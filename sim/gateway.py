"""Run the real gateway (uvicorn, a real socket) inside the running event loop, for the demo.

Sharing the loop with the simulated models and the agent keeps the demo to one thread, which
matters on a 2-core machine; the gateway is exactly the one `tandem serve` runs, on the same
server config (`router.server.server_config`: its protocol, the request limits and timeouts of
`limits`, the chat path's joined answers), so a client sees the same answers and refusals.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Generator

import uvicorn
from starlette.applications import Starlette

from router.app import create_app
from router.runtime import tune_gc
from router.server import server_config
from router.settings import Settings


class _Server(uvicorn.Server):
    # Several servers share one loop here; none of them should take over Ctrl-C, which
    # asyncio.run turns into a cancellation that stops them all.
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


@contextlib.asynccontextmanager
async def running_gateway(
    settings: Settings, host: str = "127.0.0.1", port: int = 0
) -> AsyncIterator[tuple[str, Starlette]]:
    """Yield the gateway's base URL (…/v1) and its app while it serves on `host`:`port` (port 0:
    a free one)."""
    app = create_app(settings, on_started=tune_gc)  # the process-wide settings `tandem serve` makes
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    port = sock.getsockname()[1]
    # A wildcard address serves this machine too; the URL names one a client can reach.
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else (f"[{host}]" if ":" in host else host)
    config = server_config(
        app, settings.limits, log_level="warning", lifespan="on", timeout_keep_alive=settings.server.keep_alive_s
    )
    server = _Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()  # raises what stopped it
                raise RuntimeError("the gateway stopped before it started")
            await asyncio.sleep(0.01)
        yield f"http://{shown}:{port}/v1", app
    finally:
        server.should_exit = True
        await task
        sock.close()
