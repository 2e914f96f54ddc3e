"""`POST /v1/messages` (Anthropic Messages, Claude Code) and `/v1/messages/count_tokens`."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from router.api.auth import client_namespace
from router.api.chat import read_body
from router.errors import GatewayError
from router.pipeline import Gateway
from router.protocol.messages import StreamTranslator, error_body, from_chat, to_chat


def _parsed(raw: bytes) -> dict[str, Any]:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise GatewayError(400, f"request body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise GatewayError(400, "request body must be a JSON object")
    return body


def _translated(response: Response) -> Response:
    headers = {k: v for k, v in response.headers.items() if k.startswith("x-tandem-") or k == "retry-after"}
    if isinstance(response, StreamingResponse):
        return StreamingResponse(
            StreamTranslator().translate(response.body_iterator),  # type: ignore[arg-type]
            status_code=response.status_code,
            headers=headers,
            media_type="text/event-stream",
        )
    body = bytes(response.body)
    if response.status_code < 300:
        return Response(orjson.dumps(from_chat(orjson.loads(body))), headers=headers, media_type="application/json")
    try:
        message = orjson.loads(body)["error"]["message"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        message = body.decode(errors="replace")[:500]
    return Response(
        error_body(response.status_code, message),
        status_code=response.status_code,
        headers=headers,
        media_type="application/json",
    )


async def messages(request: Request) -> Response:
    gateway: Gateway = request.app.state.gateway
    try:
        namespace = client_namespace(request)
        chat = to_chat(_parsed(await read_body(request, gateway.settings.max_body_bytes)))
        response = await gateway.chat(
            orjson.dumps(chat), request.headers, request.path_params.get("session"), namespace
        )
    except GatewayError as exc:
        return Response(
            error_body(exc.status, exc.message),
            status_code=exc.status,
            headers=exc.headers,
            media_type="application/json",
        )
    return _translated(response)


async def count_tokens(request: Request) -> Response:
    """An estimate (about 4 bytes a token), as Claude Code only uses it to size its context."""
    gateway: Gateway = request.app.state.gateway
    try:
        client_namespace(request)
        raw = await read_body(request, gateway.settings.max_body_bytes)
        _parsed(raw)
    except GatewayError as exc:
        return Response(error_body(exc.status, exc.message), status_code=exc.status, media_type="application/json")
    return Response(orjson.dumps({"input_tokens": max(len(raw) // 4, 1)}), media_type="application/json")
