"""A client that leaves cancels its step: the upstream call stops at once, the step is recorded.

Neither uvicorn nor Starlette tells a handler that its client went away (Starlette notices only
once a stream has begun); without this, a step waiting for an upstream's first byte would go on
generating, and be charged, for nobody.

Served by Tandem's own protocol (router/server.py), the watch is a callback from the
connection's `connection_lost`: no task per request. Any other server gets a task that waits on
`receive` for `http.disconnect`.

A stopping gateway ends the steps still waiting for their answer just before its shutdown
timeout (router/streaming.py's `OpenStreams`), as it ends its streams: each is answered 503
`gateway_shutting_down` and recorded so, not cut by the server with a bare 500.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any, TypeVar

from starlette.responses import Response
from starlette.types import Receive

from router.errors import error_body
from router.server import BoundedHttpToolsProtocol
from router.streaming import STEP_SHUT_DOWN, OpenStreams

T = TypeVar("T")
# What a step cancelled because its client left answers (nobody reads it); nginx's code.
CLIENT_CLOSED = 499


def shutting_down_response() -> Response:
    """What a step ended by the gateway's shutdown answers: a 503 to retry elsewhere."""
    body = error_body(STEP_SHUT_DOWN, "server_error", "gateway_shutting_down")
    headers = {"Retry-After": "1", "Connection": "close"}
    return Response(body, status_code=503, headers=headers, media_type="application/json")


class ClientWatch:
    """Watches one request's connection while its step runs, up to the step's answer."""

    __slots__ = ("_cycle", "_open", "_protocol", "_receive", "_task", "_watcher", "left", "shut")

    def __init__(self, receive: Receive, open_steps: OpenStreams | None = None) -> None:
        self._receive = receive
        # Where a step waiting for its answer is known, so that a stopping gateway ends it.
        self._open = open_steps
        self.shut = False
        self._task: asyncio.Task[object] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._protocol: BoundedHttpToolsProtocol | None = None
        self._cycle: Any = None
        self.left = False

    def start(self) -> None:
        """Watch from now on. The pipeline calls it once the step is counted: cancelling the
        count itself (a store round trip) could leave a counted step without a record. Needs the
        request body read: from then on `receive` returns only when the client disconnects."""
        self._task = asyncio.current_task()
        if self._open is not None:
            self._open.steps.add(self._shut_down)
            if self._open.ended:  # the gateway stops: a step that starts now ends at once
                asyncio.get_running_loop().call_soon(self._shut_down)
        # uvicorn's `receive` is its request cycle's method; the cycle's transport leads to the
        # connection's protocol.
        cycle = getattr(self._receive, "__self__", None)
        get_protocol = getattr(getattr(cycle, "transport", None), "get_protocol", None)
        protocol = get_protocol() if get_protocol is not None else None
        if isinstance(protocol, BoundedHttpToolsProtocol):
            self._protocol, self._cycle = protocol, cycle
            protocol.watch_disconnect(cycle, self._left)
            return
        self._watcher = asyncio.create_task(self._watch())

    def _left(self) -> None:
        self.left = True
        assert self._task is not None
        self._task.cancel()

    def _shut_down(self) -> None:
        if self.left or self._task is None or self._task.done():
            return
        self.shut = True
        self._task.cancel()

    async def _watch(self) -> None:
        while (await self._receive())["type"] != "http.disconnect":
            pass
        self._left()

    async def answer(self, work: Awaitable[T]) -> T | Response:
        """`work`'s result; a plain 499 response when the client left and the step was cancelled."""
        try:
            response = await work
        except asyncio.CancelledError:
            if not (self.left or self.shut) or self._task is None:
                raise
            self._task.uncancel()
            return Response(status_code=CLIENT_CLOSED) if self.left else shutting_down_response()
        finally:
            if self._open is not None:
                self._open.steps.discard(self._shut_down)
            if self._protocol is not None:
                self._protocol.unwatch_disconnect(self._cycle)
                self._protocol = self._cycle = None
            if self._watcher is not None:
                self._watcher.cancel()
                # The cancelled watcher keeps its CancelledError, whose traceback holds the
                # watcher's frame, which holds this object: without this, every step would leave
                # a reference cycle (the server's request cycle and its body in it) for the
                # rarely run full collection.
                self._watcher = None
        if self.left and self._task is not None:
            # The client left in the same instant as the step answered: absorb the cancellation
            # the watcher asked for, so that it does not hit Starlette writing the answer.
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0)
            self._task.uncancel()
        return response
