"""Anthropic Messages (`POST /v1/messages`, `/v1/messages/count_tokens`), what Claude Code speaks:
`translate.py` turns a request into a chat step, `answer.py` its answer, plain or streamed, into
a Messages answer or events; `content.py` reads a user turn's content blocks (images, documents,
tool results); `token_estimate.py` is count_tokens' estimate; `handler.py` serves them."""

from __future__ import annotations

from router.surfaces.messages.answer import error_body
from router.surfaces.messages.handler import count_tokens, messages

# Errors the handlers do not make (a 405) in Anthropic's shape too, as every other error here.
ERROR_BODY = error_body
ROUTES = [("/messages", messages, ["POST"]), ("/messages/count_tokens", count_tokens, ["POST"])]
