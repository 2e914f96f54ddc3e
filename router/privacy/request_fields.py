"""The request's fields other than its messages that reach the cloud, scanned and redacted like
the messages: `user`, `metadata`, tool and function definitions (their descriptions, their
parameters' descriptions, enums, defaults and examples), a structured output's schema, a
prediction, stop sequences, the web search location and the client's identifiers.

Every field of the chat-completions request (router/protocol/fields.py) is either in `SCANNED`
or in `EXEMPT` with the reason (tests/test_privacy_fields.py holds the two lists to the
protocol's); a field of neither list (a client's own, a server's extension such as vLLM's
`chat_template_kwargs` or `guided_json`, LiteLLM's `extra_body`) reaches the upstream as it
is, so it is scanned whole, keys included, like `metadata` and `logit_bias`. `/v1/messages`
and `/v1/responses` requests become chat requests before the privacy stage: their `system`
and `instructions` become the leading system message, their tools chat tools, their other
fields chat fields or nothing.

In a schema, the names the model must write back exactly (a function's or a property's name,
a type, a `$ref`) are never replaced: a placeholder there would break the tool call. What the
cloud's answer echoes of a placeholder is restored as everywhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SCANNED: dict[str, str] = {
    "user": "an end-user id, often an e-mail address",
    "metadata": "free key/value pairs the client attaches (keys and values scanned)",
    "logit_bias": "token ids and numbers (keys scanned: a client may put anything there)",
    "tools": "tool definitions: descriptions, parameter descriptions, enums, defaults, examples",
    "functions": "the legacy form of tools",
    "response_format": "a JSON schema with descriptions and examples",
    "prediction": "predicted output text",
    "stop": "stop sequences",
    "web_search_options": "the user's approximate location",
    "safety_identifier": "an end-user id, often an e-mail address",
    "prompt_cache_key": "a client-chosen key, often a user or session id",
}
EXEMPT: dict[str, str] = {
    "model": "the route's name, replaced by the upstream's model",
    "messages": "scanned and redacted as messages (router/privacy/redact.py)",
    "audio": "an output voice and format, chosen from fixed values",
    "frequency_penalty": "a number",
    "function_call": "names a defined function (must match it exactly)",
    "tool_choice": "names a defined tool (must match it exactly)",
    "logprobs": "a boolean",
    "max_completion_tokens": "a number",
    "max_tokens": "a number",
    "modalities": "fixed values (text, audio)",
    "n": "a number",
    "parallel_tool_calls": "a boolean",
    "presence_penalty": "a number",
    "reasoning_effort": "fixed values",
    "seed": "a number",
    "service_tier": "fixed values",
    "store": "a boolean",
    "stream": "a boolean",
    "stream_options": "booleans",
    "temperature": "a number",
    "top_logprobs": "a number",
    "top_p": "a number",
    "verbosity": "fixed values",
}
# The fields whose values are schemas (a tool's parameters, a structured output's): their
# names and structural words stay; every other scanned field is read whole, keys included.
SCHEMAS = frozenset({"tools", "functions", "response_format"})
# Schema keys whose values the model or the client must get back exactly.
_STRUCTURAL = frozenset(
    {"name", "type", "$ref", "$schema", "$id", "format", "required", "strict", "additionalProperties"}
)


def _walk(value: Any, edit: Callable[[str], str], structural: bool = False) -> Any:
    """`value` (a schema) with `edit` applied to its strings; dict keys are names and stay, as
    do the values of structural keys."""
    if isinstance(value, str):
        return value if structural else edit(value)
    if isinstance(value, list):
        return [_walk(item, edit, structural) for item in value]
    if isinstance(value, dict):
        return {
            key: _walk(item, edit, structural or (key in _STRUCTURAL and not isinstance(item, dict)))
            for key, item in value.items()
        }
    return value


def _whole(value: Any, edit: Callable[[str], str]) -> Any:
    """`value` with `edit` applied to every string, dict keys included."""
    if isinstance(value, str):
        return edit(value)
    if isinstance(value, list):
        return [_whole(item, edit) for item in value]
    if isinstance(value, dict):
        return {edit(key): _whole(item, edit) for key, item in value.items()}
    return value


def _scanned(raw: dict[str, Any]) -> list[str]:
    """The request's fields that are scanned: the listed ones and every field of neither list."""
    return [name for name in raw if name in SCANNED or name not in EXEMPT]


def _edited(name: str, value: Any, edit: Callable[[str], str]) -> Any:
    return _walk(value, edit) if name in SCHEMAS else _whole(value, edit)


def field_strings(raw: dict[str, Any]) -> list[str]:
    """The strings of the scanned fields, as `redact_fields` replaces values in them."""
    out: list[str] = []

    def keep(text: str) -> str:
        if text:
            out.append(text)
        return text

    for name in _scanned(raw):
        if raw[name] is not None:
            _edited(name, raw[name], keep)
    return out


def redact_fields(raw: dict[str, Any], replace: Callable[[str], str]) -> dict[str, Any]:
    """The scanned fields whose strings `replace` changed, with their new values."""
    changed: dict[str, Any] = {}
    for name in _scanned(raw):
        value = raw[name]
        if value is None:
            continue
        new = _edited(name, value, replace)
        if new != value:
            changed[name] = new
    return changed
