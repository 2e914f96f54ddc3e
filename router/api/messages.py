"""`POST /v1/messages` (Anthropic Messages, Claude Code) and `/v1/messages/count_tokens`."""

from __future__ import annotations

import orjson
from starlette.requests import Request
from starlette.responses import Response

from router.api.auth import client_namespace
from router.api.chat import read_body
from router.api.translated import parsed, serve
from router.errors import GatewayError
from router.pipeline import Gateway
from router.protocol.messages import StreamTranslator, error_body, from_chat, to_chat


async def messages(request: Request) -> Response:
    return await serve(request, to_chat, from_chat, lambda: StreamTranslator().translate, error_body)


async def count_tokens(request: Request) -> Response:
    """An estimate (about 4 bytes a token), as Claude Code only uses it to size its context."""
    gateway: Gateway = request.app.state.gateway
    try:
        client_namespace(request)
        raw = await read_body(request, gateway.settings.max_body_bytes)
        parsed(raw)
    except GatewayError as exc:
        return Response(error_body(exc.status, exc.message), status_code=exc.status, media_type="application/json")
    return Response(orjson.dumps({"input_tokens": max(len(raw) // 4, 1)}), media_type="application/json")
