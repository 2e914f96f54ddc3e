"""An error answer (the upstream's, relayed, or the gateway's own) read into one OpenAI-shaped
error object, so that each surface can re-shape it without losing its type, code and param; and
the one error every agent must recognise: the context overflow."""

from __future__ import annotations

import re
from typing import Any

import orjson

OVERFLOW_CODE = "context_length_exceeded"
# The wordings of a context overflow: OpenAI and vLLM ("maximum context length"), llama.cpp,
# SGLang, Anthropic. A 400 or 413 whose message matches is an overflow whatever its code says.
_OVERFLOW = re.compile(
    r"maximum context length|context length|context window|prompt is too long|too many tokens|exceeds the context",
    re.IGNORECASE,
)
_LIMIT = re.compile(r"(?:maximum context length is|context length of|context window of)\D{0,20}(\d+)", re.IGNORECASE)
_ASKED = re.compile(r"(?:you requested|prompt contains(?: at least)?|resulted in)\D{0,20}(\d+)", re.IGNORECASE)


def read_error(status: int, body: bytes) -> dict[str, Any]:
    """`{"message", "type", "code", "param"}` from an error body: OpenAI's `{"error": {...}}`,
    vLLM's older top-level `{"object": "error", ...}`, or anything else as its text."""
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        parsed = None
    error: Any = parsed.get("error", parsed) if isinstance(parsed, dict) else None
    if not isinstance(error, dict):
        text = error if isinstance(error, str) else body.decode(errors="replace")[:500]
        error = {"message": text or f"upstream answered HTTP {status}"}
    message = error.get("message")
    return {
        "message": message if isinstance(message, str) else str(message or f"upstream answered HTTP {status}"),
        "type": error.get("type") if isinstance(error.get("type"), str) else None,
        "code": error.get("code") if isinstance(error.get("code"), (str, int)) else None,
        "param": error.get("param") if isinstance(error.get("param"), str) else None,
    }


def event_error(event: dict[str, Any]) -> dict[str, Any] | None:
    """The error a streamed event carries in place of a chunk, as `read_error` reads one (an
    OpenAI `{"error": {...}}` or `{"error": "text"}`, vLLM's older top-level `{"object": "error",
    ...}`); None for a chunk. OpenAI, vLLM and others end a failed generation with such an event."""
    error = event.get("error")
    if error is None:
        if event.get("object") != "error":
            return None
        error = event
    if isinstance(error, str):
        error = {"message": error}
    elif not isinstance(error, dict):
        error = {"message": orjson.dumps(error).decode()}
    message = error.get("message")
    if not isinstance(message, str) or not message:
        message = orjson.dumps(error).decode()
    return {
        "message": message[:2000],
        "type": error.get("type") if isinstance(error.get("type"), str) else None,
        "code": error.get("code") if isinstance(error.get("code"), (str, int)) else None,
        "param": error.get("param") if isinstance(error.get("param"), str) else None,
    }


def is_overflow(status: int, error: dict[str, Any]) -> bool:
    if error.get("code") == OVERFLOW_CODE:
        return True
    return status in (400, 413) and bool(_OVERFLOW.search(str(error.get("message") or "")))


def overflow_tokens(message: str) -> tuple[int, int] | None:
    """(tokens asked, the limit) when the message says both, as OpenAI's and vLLM's do."""
    limit, asked = _LIMIT.search(message), _ASKED.search(message)
    if limit is None or asked is None:
        return None
    return int(asked.group(1)), int(limit.group(1))
