"""An error answer (the upstream's, relayed, or the gateway's own) read into one OpenAI-shaped
error object, so that each surface can re-shape it without losing its type, code and param; and
the one error every agent must recognise: the context overflow."""

from __future__ import annotations

import re
from typing import Any

import orjson

from router.errors import error_body

OVERFLOW_CODE = "context_length_exceeded"
# The wordings of a context overflow: OpenAI and vLLM ("maximum context length"), llama.cpp,
# SGLang, Anthropic. A 400 or 413 whose message matches is an overflow whatever its code says.
_OVERFLOW = re.compile(
    r"maximum context length|context length|context window|prompt is too long|too many tokens|exceeds the context",
    re.IGNORECASE,
)
_LIMIT = re.compile(r"(?:maximum context length is|context length of|context window of)\D{0,20}(\d+)", re.IGNORECASE)
_ASKED = re.compile(r"(?:you requested|prompt contains(?: at least)?|resulted in)\D{0,20}(\d+)", re.IGNORECASE)


_MARKUP = re.compile(r"<[^>]*>")


def read_error(status: int, body: bytes) -> dict[str, Any]:
    """`{"message", "type", "code", "param"}` from an error body: OpenAI's `{"error": {...}}`,
    vLLM's older top-level `{"object": "error", ...}`, or anything else as its text."""
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        parsed = None
    error: Any = parsed.get("error", parsed) if isinstance(parsed, dict) else None
    if isinstance(error, str):
        error = {"message": error or f"upstream answered HTTP {status}"}
    elif not isinstance(error, dict):
        # No error object (a proxy's or a web server's page): what it says, without its markup.
        text = " ".join(_MARKUP.sub(" ", body[:4096].decode(errors="replace")).split())[:300]
        said = f" with no error object: {text}" if text else ""
        error = {"message": f"upstream answered HTTP {status}{said}"}
    message = error.get("message")
    return {
        "message": message if isinstance(message, str) else str(message or f"upstream answered HTTP {status}"),
        "type": error.get("type") if isinstance(error.get("type"), str) else None,
        "code": error.get("code") if isinstance(error.get("code"), (str, int)) else None,
        "param": error.get("param") if isinstance(error.get("param"), str) else None,
    }


def is_openai_error(body: bytes) -> bool:
    """Whether an error body is in OpenAI's shape, `{"error": {"message": "…", …}}`, as every
    OpenAI client parses it (a relayed upstream error in another shape is re-shaped)."""
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return False
    error = parsed.get("error") if isinstance(parsed, dict) else None
    return isinstance(error, dict) and isinstance(error.get("message"), str)


# An error's `type` by its status, where the upstream named none.
DEFAULT_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    429: "rate_limit_error",
}


def openai_error_body(status: int, error: dict[str, Any]) -> bytes:
    """An upstream's error (as `read_error` reads it) in the OpenAI shape, its type, code and
    param kept; a context overflow carries code context_length_exceeded whatever the upstream
    called it, and a type named by the status where the upstream gave none."""
    kind, code = error.get("type"), error.get("code")
    if is_overflow(status, error):
        kind, code = kind or "invalid_request_error", OVERFLOW_CODE
    if not kind:
        kind = DEFAULT_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    if code is None and status == 429:
        code = "rate_limit_exceeded"
    return error_body(str(error.get("message") or ""), str(kind), code, error.get("param"))


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
