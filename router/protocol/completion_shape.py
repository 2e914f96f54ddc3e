"""What the gateway reads of an upstream's chat completion, checked where it comes in.

A plain answer that is not the shape of a chat completion (`choices` not an array, a message
that is not an object, tool calls whose name or arguments are not strings…) is the upstream's
failure (`invalid_answer`: the other target may answer, or the client gets a 502), found once
at the boundary instead of by each reader. A stream is relayed as the upstream sends it; what a
translated surface reads of each chunk is `clean_chunk`'s copy, with what is malformed left out
(the chat surface's relay never parses its chunks: none of this is on its path).
"""

from __future__ import annotations

from typing import Any

from router.protocol.fields import calls_problem, type_name
from router.protocol.usage import Usage, token_count

MAX_INDEX = 2**31


def completion_problem(answer: dict[str, Any]) -> str | None:
    """Why `answer` (a JSON object) is not a chat completion the gateway can read; None if it is."""
    for key in ("id", "model"):
        if answer.get(key) is not None and not isinstance(answer[key], str):
            return f"'{key}' must be a string, got {type_name(answer[key])}"
    usage = answer.get("usage")
    if usage is not None and not isinstance(usage, dict):
        return f"'usage' must be an object, got {type_name(usage)}"
    choices = answer.get("choices")
    if not isinstance(choices, list):
        return f"'choices' must be an array, got {type_name(choices)}"
    if not choices:
        return "'choices' is empty: no answer to give"
    for number, choice in enumerate(choices):
        at = f"choices[{number}]"
        if not isinstance(choice, dict):
            return f"{at} must be an object, got {type_name(choice)}"
        message = choice.get("message")
        if not isinstance(message, dict):
            return f"{at}.message must be an object, got {type_name(message)}"
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            return f"{at}.message.content must be a string or an array, got {type_name(content)}"
        if message.get("tool_calls") is not None:
            found = calls_problem(message["tool_calls"], f"{at}.message.tool_calls")
            if found is not None:
                return found[1]
            missing = _unnamed(message["tool_calls"], f"{at}.message.tool_calls")
            if missing is not None:
                return missing
        reason = choice.get("finish_reason")
        if reason is not None and not isinstance(reason, str):
            return f"{at}.finish_reason must be a string, got {type_name(reason)}"
    return None


def _unnamed(calls: list[dict[str, Any]], where: str) -> str | None:
    """An answer's tool call without its function's name: a client runs a call by its name. A
    call without an id passes, as it does streamed: Gemini's OpenAI-compatible endpoint, NVIDIA
    NIM and older llama.cpp servers give empty or no ids, and clients read such calls."""
    for number, call in enumerate(calls):
        at = f"{where}[{number}]"
        function = call.get("function")
        if not isinstance(function, dict) or not function.get("name"):
            return f"{at}.function.name is missing: a client runs a call by its name"
    return None


def _index(value: Any) -> int:
    return value if type(value) is int and 0 <= value < MAX_INDEX else 0


def _call(call: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"index": _index(call.get("index", 0))}
    if isinstance(call.get("id"), str):
        out["id"] = call["id"]
    function = call.get("function")
    if isinstance(function, dict):
        out["function"] = {key: function[key] for key in ("name", "arguments") if isinstance(function.get(key), str)}
    return out


def reasoning_text(message: dict[str, Any]) -> str:
    """The reasoning of a chat message or delta: `reasoning_content` (vLLM's reasoning parsers,
    DeepSeek, Kimi), else `reasoning` (OpenRouter, newer vLLM); "" when it has none. One of the
    two only: a server moving from one name to the other may send both with the same text."""
    for key in ("reasoning_content", "reasoning"):
        text = message.get(key)
        if isinstance(text, str) and text:
            return text
    return ""


def reasoning_tokens(usage: Any) -> int:
    """The reasoning tokens an upstream's usage counts among its completion tokens
    (`completion_tokens_details.reasoning_tokens`); 0 when it gives none that is a count."""
    details = usage.get("completion_tokens_details") if isinstance(usage, dict) else None
    found = token_count(details.get("reasoning_tokens")) if isinstance(details, dict) else None
    return found or 0


def _delta(delta: dict[str, Any]) -> dict[str, Any]:
    clean: dict[str, Any] = {}
    for key in ("role", "content", "refusal"):
        if isinstance(delta.get(key), str):
            clean[key] = delta[key]
    reasoning = reasoning_text(delta)
    if reasoning:
        clean["reasoning_content"] = reasoning
    calls = delta.get("tool_calls")
    if isinstance(calls, list):
        clean["tool_calls"] = [_call(call) for call in calls if isinstance(call, dict)]
    return clean


def _choice(choice: dict[str, Any]) -> dict[str, Any]:
    delta = choice.get("delta")
    reason = choice.get("finish_reason")
    clean = {
        "index": _index(choice.get("index", 0)),
        "delta": _delta(delta) if isinstance(delta, dict) else {},
        "finish_reason": reason if isinstance(reason, str) else None,
    }
    # vLLM names the stop string that ended the answer here (a token id, an int, for a stop
    # token): what a Messages answer reports as its `stop_sequence`.
    if isinstance(choice.get("stop_reason"), str):
        clean["stop_reason"] = choice["stop_reason"]
    return clean


def clean_chunk(chunk: dict[str, Any]) -> dict[str, Any]:
    """A `chat.completion.chunk` as a translator reads it: the fields it uses, of their types;
    what is malformed is left out (a usage whose counts are not counts, a choice that is not an
    object, tool-call fields that are not strings). A delta's reasoning is `reasoning_content`
    whichever name the upstream gave it."""
    clean: dict[str, Any] = {key: chunk[key] for key in ("id", "model") if isinstance(chunk.get(key), str)}
    usage = Usage.from_openai(chunk.get("usage"))
    if usage is not None:
        clean["usage"] = {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
            "completion_tokens_details": {"reasoning_tokens": reasoning_tokens(chunk["usage"])},
        }
    choices = chunk.get("choices")
    clean["choices"] = [_choice(c) for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []
    return clean
