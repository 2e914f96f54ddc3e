"""`POST /v1/responses` (OpenAI Responses, Codex CLI)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from router.api.translated import Surface, Translate, serve
from router.protocol.responses import StreamTranslator, error_body, from_chat, stream_error, to_chat


def _stream(chat: dict[str, Any]) -> Translate:
    return StreamTranslator().translate


SURFACE = Surface(to_chat, from_chat, _stream, error_body, stream_error)


async def responses(request: Request) -> Response:
    return await serve(request, SURFACE)
