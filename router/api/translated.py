"""Serving another API surface through the chat step: translate the request in, the answer out."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from router.api.auth import client_namespace
from router.api.chat import read_body
from router.api.disconnect import ClientWatch
from router.errors import GatewayError
from router.pipeline import Gateway
from router.protocol.fields import MAX_JSON_DEPTH, check_depth, too_deep

ToChat = Callable[[dict[str, Any]], dict[str, Any]]
FromChat = Callable[[dict[str, Any]], dict[str, Any]]
Translate = Callable[[AsyncIterator[bytes]], AsyncIterator[bytes]]
ErrorBody = Callable[[int, str], bytes]


def parsed(raw: bytes) -> dict[str, Any]:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if str(exc).startswith("depth limit"):
            raise too_deep(MAX_JSON_DEPTH) from exc
        raise GatewayError(400, f"request body is not valid JSON: {exc}", code="invalid_json") from exc
    if not isinstance(body, dict):
        raise GatewayError(400, "request body must be a JSON object")
    check_depth(body)  # the translated request is re-serialised: no recursion error later
    return body


def _answer(response: Response, from_chat: FromChat, translate: Callable[[], Translate], error: ErrorBody) -> Response:
    headers = {k: v for k, v in response.headers.items() if k.startswith("x-tandem-") or k == "retry-after"}
    if isinstance(response, StreamingResponse):
        return StreamingResponse(
            translate()(response.body_iterator),  # type: ignore[arg-type]
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
        error(response.status_code, message),
        status_code=response.status_code,
        headers=headers,
        media_type="application/json",
    )


async def serve(
    request: Request, to_chat: ToChat, from_chat: FromChat, translate: Callable[[], Translate], error: ErrorBody
) -> Response:
    gateway: Gateway = request.app.state.gateway
    try:
        namespace = client_namespace(request)
        chat = to_chat(parsed(await read_body(request, gateway.settings.max_body_bytes)))
        session = request.path_params.get("session")
        watch = ClientWatch(request.receive)
        response = await watch.answer(
            gateway.chat(orjson.dumps(chat), request.headers, session, namespace, watch.start)
        )
    except GatewayError as exc:
        return Response(
            error(exc.status, exc.message), status_code=exc.status, headers=exc.headers, media_type="application/json"
        )
    return _answer(response, from_chat, translate, error)
