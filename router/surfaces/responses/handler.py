"""`POST /v1/responses` (OpenAI Responses, Codex CLI)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from router.api.translated import Surface, Translate, serve
from router.protocol.chat import ChatRequest
from router.protocol.prefix_translated import SurfaceSpec
from router.surfaces.responses.answer import StreamTranslator, error_body, from_chat, stream_error
from router.surfaces.responses.request import (
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
    "responses", to_chat, "input", check_request, item_messages, leading, chat_fields, usable, answer_view
)
SURFACE = Surface(SPEC, from_chat, _stream, error_body, stream_error)


async def responses(request: Request) -> Response:
    return await serve(request, SURFACE)
