"""OpenAI Responses (`POST /v1/responses`), what Codex CLI speaks: `request.py` turns input items
into a chat step, `answer.py` turns the answer, plain or streamed, into output items and
`response.*` events, `handler.py` serves them."""

from __future__ import annotations

from router.surfaces.responses.handler import responses

ROUTES = [("/responses", responses, ["POST"])]
