"""`POST /v1/chat/completions`."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.requests import Request
from starlette.responses import Response

from router.api.auth import client_namespace
from router.api.disconnect import ClientWatch
from router.api.http import chat_response
from router.engine import Engine
from router.errors import GatewayError
from router.result import StepMeta, StepResult


async def read_body(request: Request, limit: int, headers: Mapping[str, str] | None = None) -> bytes:
    """The request body, refused with 413 as soon as it passes `limit` bytes (`headers`: the
    request's, already read into a dict, else read here)."""
    declared = (request.headers if headers is None else headers).get("content-length")
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


def step_headers(request: Request) -> dict[str, str]:
    """The headers as the engine reads them: lower-case names, the first of a repeated name (as
    Starlette's `Headers.get` gives it), decoded once. The engine looks up seven names a step;
    a lookup in Starlette's headers decodes and compares them all, one by one."""
    headers: dict[str, str] = {}
    for name, value in request.headers.raw:
        key = name.decode("latin-1")
        if key not in headers:
            headers[key] = value.decode("latin-1")
    return headers


def _too_large(size: int, limit: int) -> GatewayError:
    return GatewayError(
        413,
        f"request body of {size} bytes or more is over the limit of {limit} bytes (max_body_bytes)",
        code="request_too_large",
    )


async def chat_completions(request: Request) -> Response:
    result = await chat_step(request)
    return result if isinstance(result, Response) else chat_response(result)


async def chat_step(request: Request) -> StepResult | Response:
    """The step of a chat completions request: its result, or the 499 of a client that left."""
    engine: Engine = request.app.state.engine
    headers = step_headers(request)
    namespace = client_namespace(request, headers)
    body = await read_body(request, engine.max_body_bytes, headers)
    watch = ClientWatch(request.receive)
    meta = StepMeta(headers, namespace, request.path_params.get("session"), watch.start)
    return await watch.answer(engine.chat(body, meta))
