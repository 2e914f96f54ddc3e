"""`POST /v1/messages` (Anthropic Messages, Claude Code) and `/v1/messages/count_tokens`."""

from __future__ import annotations

import logging
from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from router.api.auth import client_namespace
from router.api.chat import read_body
from router.api.translated import Surface, Translate, serve
from router.engine import Engine
from router.errors import GatewayError, internal_error
from router.protocol.chat import ChatRequest
from router.protocol.prefix_translated import SurfaceSpec, parsed
from router.surfaces.messages.answer import StreamTranslator, error_body, from_chat
from router.surfaces.messages.token_estimate import encoded_tokens, input_tokens
from router.surfaces.messages.translate import (
    chat_fields,
    check_request,
    leading,
    system_messages,
    to_chat,
    turn_messages,
)

log = logging.getLogger("tandem")


def _turns(turns: list[Any], first: int) -> list[list[dict[str, Any]]]:
    return [turn_messages(turn, first + index) for index, turn in enumerate(turns)]


SPEC = SurfaceSpec("messages", to_chat, "messages", check_request, _turns, leading, chat_fields)


def _stream(chat: dict[str, Any], step: ChatRequest) -> Translate:
    return StreamTranslator(encoded_tokens(step.encoded(), chat), chat.get("stop")).translate


SURFACE = Surface(SPEC, from_chat, _stream, error_body)


async def messages(request: Request) -> Response:
    return await serve(request, SURFACE)


async def count_tokens(request: Request) -> Response:
    """An estimate without a tokenizer (router/surfaces/messages/token_estimate.py), as Claude Code only
    uses it to size its context: text by characters, images by their size, not their bytes."""
    engine: Engine = request.app.state.engine
    try:
        client_namespace(request)
        raw = await read_body(request, engine.max_body_bytes)
        body = parsed(raw, engine.max_json_depth)
        check_request(body, counting=True)
        # What `/v1/messages` would refuse is refused here too, named as it would be there (an
        # image whose source is not an object), rather than counted.
        system_messages(body)
        _turns(body["messages"], 0)
    except GatewayError as exc:
        return Response(error_body(exc.status, exc.error()), status_code=exc.status, media_type="application/json")
    except ClientDisconnect:
        raise  # nobody to answer (the app's handler)
    except Exception as exc:
        # In Anthropic's shape, as /v1/messages answers it (the app's last handler speaks OpenAI's).
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        error = internal_error(exc)
        return Response(error_body(500, error.error()), status_code=500, media_type="application/json")
    return Response(orjson.dumps({"input_tokens": input_tokens(body)}), media_type="application/json")
