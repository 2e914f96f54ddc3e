"""`POST /v1/chat/completions`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive

from router.api.auth import client_namespace
from router.errors import GatewayError
from router.pipeline import Gateway


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 as soon as it passes `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(int(declared), limit)
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(size, limit)
        parts.append(chunk)
    return b"".join(parts)


def _too_large(size: int, limit: int) -> GatewayError:
    return GatewayError(
        413,
        f"request body of {size} bytes or more is over the limit of {limit} bytes (max_body_bytes)",
        code="request_too_large",
    )


async def cancel_on_disconnect(receive: Receive, work: Awaitable[Response]) -> Response:
    """Await `work` (a step, up to its first byte), cancelling it the moment the client leaves.

    Neither uvicorn nor Starlette tells a handler that its client went away; without this, a
    step waiting for an upstream would go on generating (and be charged) for nobody. Call it
    once the body is read: from then on `receive` only returns when the client disconnects.
    """
    task = asyncio.current_task()
    assert task is not None
    left = False

    async def watch() -> None:
        nonlocal left
        while (await receive())["type"] != "http.disconnect":
            pass
        left = True
        task.cancel()

    watcher = asyncio.create_task(watch())
    try:
        response = await work
    except asyncio.CancelledError:
        if not left:
            raise
        task.uncancel()
        return Response(status_code=499)  # nobody reads it: the client is gone
    finally:
        watcher.cancel()
    if left:
        # The client left in the same instant as the step answered: absorb the cancellation
        # the watcher asked for, so that it does not hit Starlette writing the answer.
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0)
        task.uncancel()
    return response


async def chat_completions(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    namespace = client_namespace(request)
    body = await read_body(request, gateway.settings.max_body_bytes)
    step = gateway.chat(body, request.headers, request.path_params.get("session"), namespace)
    return await cancel_on_disconnect(request.receive, step)
