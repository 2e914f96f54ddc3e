"""`POST /v1/chat/completions`."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from router.api.auth import client_namespace
from router.api.disconnect import ClientWatch
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


async def chat_completions(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    namespace = client_namespace(request)
    body = await read_body(request, gateway.settings.max_body_bytes)
    watch = ClientWatch(request.receive)
    step = gateway.chat(body, request.headers, request.path_params.get("session"), namespace, watch.start)
    return await watch.answer(step)
