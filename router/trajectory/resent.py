"""Answers that clients send back in another form than the one they were given, read back into
the text and tool calls they were delivered as, so that stitching recognises them.

smolagents (1.x) keeps no `tool_calls` in the history it sends: an answer's tool calls come back
as an assistant text, "Calling tools:\\n" followed by the calls as a Python list literal
(`str()` of `[{"id": …, "type": "function", "function": {"name": …, "arguments": {…}}}]`, the
arguments parsed), after the answer's own text when it had some."""

from __future__ import annotations

import ast

import orjson

SMOLAGENTS_CALLS = "Calling tools:\n["
MAX_LITERAL_CHARS = 256 * 1024  # a resent call list larger than this is not read back

# (id, name, arguments as JSON text or None), as `identify.calls_of` gives them.
ResentCall = tuple[str | None, str | None, str | None]


def text_calls(text: str) -> tuple[str, list[ResentCall]] | None:
    """The text and tool calls of an answer resent as text with its calls written out, or None
    when the text is not such a form (or its list does not read as tool calls)."""
    at = text.rfind(SMOLAGENTS_CALLS)
    if at < 0 or len(text) - at > MAX_LITERAL_CHARS:
        return None
    try:
        # literal_eval reads literals only (no names, no calls): safe on what a client sent.
        listed = ast.literal_eval(text[at + len(SMOLAGENTS_CALLS) - 1 :].strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(listed, list) or not listed:
        return None
    calls: list[ResentCall] = []
    for call in listed:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            return None
        call_id, name, arguments = call.get("id"), function.get("name"), function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            try:
                arguments = orjson.dumps(arguments).decode()  # parsed: compared as JSON alike
            except TypeError:
                return None  # not JSON (a set, bytes): not arguments a model gave
        calls.append(
            (call_id if isinstance(call_id, str) else None, name if isinstance(name, str) else None, arguments)
        )
    return text[:at].strip(), calls
