"""What a step's judge row needs beyond its features: the action the answer took and an excerpt
of the context it answered, both computed by the judge's own code (`judge/actions.py`, the
importer's excerpt length) so that a row exported from the gateway reads like an imported one.

Kept on the record only when the route records features (`record_features`), so that a step
record stays small elsewhere. On a route whose privacy policy treats values as sensitive the
excerpt carries the trajectory's placeholders, never the originals.
"""

from __future__ import annotations

from typing import Any

from judge.actions import content_text, message_action
from router.config.privacy import protects
from router.privacy.at_rest import WITHHELD
from router.privacy.guard import PrivacyGuard

# The importer's excerpt length (judge/replay.py, not imported: it pulls numpy into a gateway
# that may not use the judge).
EXCERPT_CHARS = 400
# A value cut by the excerpt's start must still be found: redact a wider window, then cut.
_WINDOW = EXCERPT_CHARS * 4


def action_of(message: dict[str, Any]) -> str:
    """The action type of an assistant message (`judge.actions.ActionType`'s value)."""
    return message_action(message).value


def streamed_message(text: str, tools: list[str]) -> dict[str, Any]:
    """An assistant message rebuilt from what the stream relay captured: the text, and the
    tool names (one call's arguments are the captured text when the answer had no content)."""
    if not tools:
        return {"role": "assistant", "content": text}
    arguments = text if len(tools) == 1 else "{}"
    calls = [{"type": "function", "function": {"name": name, "arguments": arguments}} for name in tools]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def latest_context(messages: list[dict[str, Any]]) -> str:
    """The text of the latest tool result or user message: what the step was answering."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") in ("tool", "user"):
            return content_text(message)
    return ""


def excerpt_of(messages: list[dict[str, Any]], guard: PrivacyGuard) -> str:
    """The end of the latest tool output (or user text), at most `EXCERPT_CHARS` characters, with
    the route's privacy applied: the trajectory's placeholders on a sensitive route, and nothing
    when detection failed there (fail closed)."""
    text = latest_context(messages)[-_WINDOW:]
    if not text or not protects(guard.mode):
        return text[-EXCERPT_CHARS:]
    if guard.failed:
        return WITHHELD
    redacted, _ = guard.redactor().text(text)
    return redacted[-EXCERPT_CHARS:]
