"""`POST /v1/responses` (OpenAI Responses, Codex CLI): errors in the OpenAI shape."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from router.api.translated import serve
from router.errors import error_body
from router.protocol.responses import StreamTranslator, from_chat, to_chat


def _error(status: int, message: str) -> bytes:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return error_body(message, kind, None)


async def responses(request: Request) -> Response:
    return await serve(request, to_chat, from_chat, lambda: StreamTranslator().translate, _error)
