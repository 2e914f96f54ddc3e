"""`POST /v1/responses` (OpenAI Responses, Codex CLI), and `GET` and `DELETE
/v1/responses/{id}` for the responses kept for `previous_response_id` (kept.py)."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from router.api.auth import client_namespace
from router.api.http import error_response
from router.api.query import known_only, single, whole_param
from router.api.translated import Kept, Surface, Translate, serve
from router.engine import Engine
from router.errors import GatewayError, bad_request
from router.protocol.chat import ChatRequest
from router.protocol.fields import shown
from router.protocol.prefix_translated import SurfaceSpec
from router.surfaces.responses.answer import StreamTranslator, error_body, from_chat, stream_error
from router.surfaces.responses.continued import Continuation
from router.surfaces.responses.kept import KeptResponses
from router.surfaces.responses.request import (
    SAID,
    chat_fields,
    check_request,
    item_messages,
    leading,
    text_format,
    to_chat,
    usable,
)
from router.surfaces.responses.tools import answer_tools, answer_view


def _stream(chat: dict[str, Any], step: ChatRequest) -> Translate:
    return StreamTranslator(text_format(chat), answer_tools(chat)).translate


SPEC = SurfaceSpec(
    "responses", to_chat, "input", check_request, item_messages, leading, chat_fields, usable, answer_view, SAID
)
SURFACE = Surface(SPEC, from_chat, _stream, error_body, stream_error)


def _continuation(request: Request, engine: Engine, namespace: str) -> Kept:
    return Continuation(request.app.state.kept_responses, namespace, engine.route_for, engine.max_body_bytes)


async def responses(request: Request) -> Response:
    return await serve(request, SURFACE, _continuation)


def _not_found(response_id: str) -> Response:
    return error_response(
        GatewayError(
            404,
            f"no response with id {shown(response_id)} is kept for this client (never answered here, answered with "
            "store: false, deleted, or past kept_responses.ttl_s)",
            code="not_found",
            param="response_id",
        )
    )


async def kept_response(request: Request) -> Response:
    """`GET /v1/responses/{id}`: a kept response as it was answered; `DELETE`: forget it (a
    conversation that would continue it can no longer be continued)."""
    response_id: str = request.path_params["response_id"]
    try:
        namespace = client_namespace(request)
        kept: KeptResponses | None = request.app.state.kept_responses
        if request.method == "DELETE":
            if kept is None or not await kept.delete(namespace, response_id):
                return _not_found(response_id)
            body = {"id": response_id, "object": "response.deleted", "deleted": True}
            return Response(orjson.dumps(body), media_type="application/json")
        record = None if kept is None else await kept.read(namespace, response_id)
    except GatewayError as exc:
        return error_response(exc)
    if record is None:
        return _not_found(response_id)
    return Response(orjson.dumps(record["response"]), media_type="application/json")


def _listed(items: list[Any], response_id: str) -> list[dict[str, Any]]:
    """Input items as OpenAI lists them: each with an id (items sent without one get one made of
    the response's id and their place) and a message's text as content parts."""
    listed = []
    for place, item in enumerate(items):
        entry = dict(item) if isinstance(item, dict) else {"type": "message", "content": item}
        entry.setdefault("type", "message")
        entry.setdefault("id", f"item_{response_id.removeprefix('resp_')}_{place}")
        if entry["type"] == "message" and isinstance(entry.get("content"), str):
            kind = "output_text" if entry.get("role") == "assistant" else "input_text"
            entry["content"] = [{"type": kind, "text": entry["content"]}]
        listed.append(entry)
    return listed


# What OpenAI's endpoint takes; `include` asks for fields of items that are returned whole here.
PAGE_PARAMS = ("limit", "order", "after", "include", "include[]")


def _page_query(request: Request) -> tuple[int, str, str | None]:
    """`limit` (1 to 100, 20 by default), `order` (`desc` by default) and `after` of a list,
    checked as the trajectory API checks its query (router/api/query.py)."""
    known_only(request, PAGE_PARAMS)
    limit = whole_param(single(request, "limit") or "20", "limit", 1, 100)
    order = single(request, "order") or "desc"
    if order not in ("asc", "desc"):
        raise bad_request(f"'order' must be 'asc' or 'desc', got {shown(order)}", param="order")
    return limit, order, single(request, "after")


async def kept_input_items(request: Request) -> Response:
    """`GET /v1/responses/{id}/input_items`: the items a kept response answered (its
    conversation's, the turns it continued included), a page at a time."""
    response_id: str = request.path_params["response_id"]
    try:
        namespace = client_namespace(request)
        limit, order, after = _page_query(request)
        kept: KeptResponses | None = request.app.state.kept_responses
        items = None if kept is None else await kept.inputs(namespace, response_id)
    except GatewayError as exc:
        return error_response(exc)
    if items is None:
        return _not_found(response_id)
    listed = _listed(items, response_id)
    if order == "desc":
        listed.reverse()
    if after is not None:
        ids = [item["id"] for item in listed]
        if after not in ids:
            error = bad_request(f"'after' names no item of this list: {shown(after)}", param="after")
            return error_response(error)
        listed = listed[ids.index(after) + 1 :]
    page = listed[:limit]
    body = {
        "object": "list",
        "data": page,
        "first_id": page[0]["id"] if page else None,
        "last_id": page[-1]["id"] if page else None,
        "has_more": len(listed) > limit,
    }
    return Response(orjson.dumps(body), media_type="application/json")
