"""OpenAI Responses (`POST /v1/responses`), what Codex CLI speaks: `request.py` turns input items
into a chat step, `answer.py` turns the answer, plain or streamed, into output items and
`response.*` events, `handler.py` serves them; `kept.py` keeps answers for
`previous_response_id` and `continued.py` continues a conversation from them."""

from __future__ import annotations

from router.surfaces.responses.handler import kept_input_items, kept_response, responses

ROUTES = [
    ("/responses", responses, ["POST"]),
    ("/responses/{response_id}", kept_response, ["GET", "DELETE"]),
    ("/responses/{response_id}/input_items", kept_input_items, ["GET"]),
]
