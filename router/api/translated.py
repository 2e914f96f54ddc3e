"""Serving another API surface through the chat step: translate the request in, the answer out,
and errors into the surface's own shape with their type, code and param kept."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
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
from router.protocol.upstream_error import read_error

Translate = Callable[[AsyncIterator[bytes]], AsyncIterator[bytes]]


@dataclass(frozen=True, slots=True)
class Surface:
    """What a surface supplies: its request as a chat body (a client's mistake raises a 400), a
    chat answer in its shape, a stream translator for a chat body, its error body for a status
    and an OpenAI error object, and, where its clients expect a streamed request's error inside
    the stream rather than as an HTTP status, the events for it (None: an HTTP error)."""

    to_chat: Callable[[dict[str, Any]], dict[str, Any]]
    from_chat: Callable[[dict[str, Any]], dict[str, Any]]
    stream: Callable[[dict[str, Any]], Translate]
    error: Callable[[int, dict[str, Any]], bytes]
    stream_error: Callable[[int, dict[str, Any]], bytes | None] = lambda status, error: None


def parsed(raw: bytes, max_depth: int = MAX_JSON_DEPTH) -> dict[str, Any]:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if str(exc).startswith("depth limit"):
            raise too_deep(max_depth) from exc
        raise GatewayError(400, f"request body is not valid JSON: {exc}", code="invalid_json") from exc
    if not isinstance(body, dict):
        raise GatewayError(400, "request body must be a JSON object")
    check_depth(body, max_depth)  # the translated request is re-serialised: no recursion error later
    return body


def _gateway_error(exc: GatewayError) -> dict[str, Any]:
    return {"message": exc.message, "type": exc.type, "code": exc.code, "param": exc.param}


def _answer(response: Response, surface: Surface, chat: dict[str, Any]) -> Response:
    headers = {k: v for k, v in response.headers.items() if k.startswith("x-tandem-") or k == "retry-after"}
    if isinstance(response, StreamingResponse):
        return StreamingResponse(
            surface.stream(chat)(response.body_iterator),  # type: ignore[arg-type]
            status_code=response.status_code,
            headers=headers,
            media_type="text/event-stream",
            # What runs once the answer is sent (a shadow call) runs after the translated one.
            background=response.background,
        )
    body = bytes(response.body)
    if response.status_code < 300:
        return Response(
            orjson.dumps(surface.from_chat(orjson.loads(body))),
            headers=headers,
            media_type="application/json",
            background=response.background,
        )
    return _error(response.status_code, read_error(response.status_code, body), surface, chat, headers)


def _error(
    status: int, error: dict[str, Any], surface: Surface, chat: dict[str, Any] | None, headers: dict[str, str]
) -> Response:
    if chat is not None and chat.get("stream"):
        events = surface.stream_error(status, error)
        if events is not None:
            return Response(events, headers=headers, media_type="text/event-stream")
    return Response(surface.error(status, error), status_code=status, headers=headers, media_type="application/json")


async def serve(request: Request, surface: Surface) -> Response:
    gateway: Gateway = request.app.state.gateway
    chat: dict[str, Any] | None = None
    try:
        namespace = client_namespace(request)
        raw = await read_body(request, gateway.settings.max_body_bytes)
        try:
            chat = surface.to_chat(parsed(raw, gateway.max_json_depth))
        except GatewayError as exc:
            # Refused before it became a step, as the chat path counts its own refusals.
            gateway.metrics.bad_requests.labels(exc.code or "invalid_request").inc()
            raise
        session = request.path_params.get("session")
        watch = ClientWatch(request.receive)
        response = await watch.answer(
            gateway.chat(orjson.dumps(chat), request.headers, session, namespace, watch.start)
        )
    except GatewayError as exc:
        return _error(exc.status, _gateway_error(exc), surface, chat, exc.headers)
    return _answer(response, surface, chat)
