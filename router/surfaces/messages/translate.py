"""Anthropic Messages (`POST /v1/messages`, what Claude Code speaks), translated to and from the
internal chat step: a request becomes a chat-completions body (here); the answer, plain or
streamed, becomes a Messages answer (message / content-block / delta events: answer.py)."""

from __future__ import annotations

from typing import Any

import orjson

from router.errors import bad_request
from router.protocol.fields import (
    Kind,
    check,
    one_of,
    required_problem,
    required_string,
    shown,
    string_field,
    type_name,
)
from router.surfaces.messages.content import user_turn

# The request fields whose type is checked (a mistyped one is a 400 that names it), members
# after the object that holds them: Anthropic's API reference's types and ranges.
FIELDS: dict[str, Kind] = {
    "stream": "bool",
    "max_tokens": "count",
    "temperature": "unit",
    "top_p": "unit",
    "top_k": "natural",  # vLLM reads -1 as "off"; Anthropic's API refuses it (at least 0)
    "system": "string|objects",
    "tools": "objects",
    "tools[].name": "name",
    "tools[].description": "string",
    "tools[].input_schema": "object",
    "tool_choice": "object",
    "tool_choice.type": one_of("auto", "any", "tool", "none"),
    "tool_choice.disable_parallel_tool_use": "bool",
    "stop_sequences": "strings",
    "metadata": "object",
    "metadata.user_id": "string",
    "service_tier": "string",
    "thinking": "object",
    "thinking.type": "string",  # enabled, disabled, adaptive…: not sent on, so not enumerated
    "thinking.budget_tokens": "budget",
    "output_config": "object",
    "output_config.effort": "string",
    "output_format": "object",
}
# Members that must be there when their object is: a tool choice of no type was read as `auto`.
REQUIRED = frozenset(("tools[].name", "tool_choice.type", "thinking.type"))
# Between the text blocks of a system prompt: Claude Code sends several (identity, instructions,
# environment) that were written as separate paragraphs.
BLOCK_SEPARATOR = "\n\n"


def _text(blocks: Any, where: str, separator: str = "") -> str:
    if isinstance(blocks, str):
        return blocks
    if isinstance(blocks, list):
        for n, block in enumerate(blocks):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind != "text":
                # A system prompt is text blocks only (as Anthropic's API takes it): another
                # block would be dropped without a word.
                got = f"type {shown(kind)}" if isinstance(block, dict) else type_name(block)
                raise bad_request(f"{where}[{n}] must be a text block, got {got}", param=f"{where}[{n}]")
        return separator.join(string_field(b, "text", f"{where}[{n}]") for n, b in enumerate(blocks))
    return ""


def _assistant_turn(content: Any, where: str) -> dict[str, Any]:
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    text = []
    calls = []
    thinking = []
    for n, block in enumerate(content if isinstance(content, list) else []):
        kind = block.get("type") if isinstance(block, dict) else None
        at = f"{where}[{n}]"
        if kind == "text":
            text.append(string_field(block, "text", at))
        elif kind == "tool_use":
            given = block.get("input")
            if given is not None and not isinstance(given, dict):
                raise bad_request(f"{at}.input must be an object, got {type_name(given)}", param=f"{at}.input")
            arguments = orjson.dumps(given or {}).decode()
            calls.append(
                {
                    "id": required_string(block, "id", at),
                    "type": "function",
                    "function": {"name": required_string(block, "name", at), "arguments": arguments},
                }
            )
        elif kind == "thinking":
            thinking.append(string_field(block, "thinking", at))
        # A redacted_thinking block is Anthropic's encrypted reasoning: no text a chat model
        # can read, so it is not sent on.
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = calls
    if any(thinking):
        # The turn's reasoning goes back as the model wrote it, as chat servers take it (vLLM's
        # chat templates; DeepSeek's thinking mode refuses a tool-call turn without it).
        message["reasoning_content"] = "".join(thinking)
    return message


def _tool_choice(choice: Any) -> Any:
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind == "any":
        return "required"
    if kind == "tool":
        return {"type": "function", "function": {"name": choice.get("name", "")}}
    if kind == "none":
        return "none"
    return "auto"


def _output_options(body: dict[str, Any]) -> dict[str, Any]:
    """`output_config` (and the beta's `output_format`): a JSON schema the answer must follow
    becomes `response_format`, the effort `reasoning_effort`; another format is a 400."""
    config = body.get("output_config") or {}
    out: dict[str, Any] = {}
    if isinstance(config.get("effort"), str):
        out["reasoning_effort"] = config["effort"]
    form, where = config.get("format"), "output_config.format"
    if form is None:
        form, where = body.get("output_format"), "output_format"
    if form is None:
        return out
    if not isinstance(form, dict) or form.get("type") != "json_schema" or not isinstance(form.get("schema"), dict):
        raise bad_request(f"{where} must be an object of type json_schema with a 'schema' object", param=where)
    out["response_format"] = {"type": "json_schema", "json_schema": {"name": "output", "schema": form["schema"]}}
    return out


def check_request(body: dict[str, Any], counting: bool = False) -> None:
    """The checks on a Messages request's own fields (its turns are checked as translated);
    `counting`: a count_tokens request, which has no `max_tokens`."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad_request(required_problem("'model'", model, "a non-empty string"), param="model")
    turns = body.get("messages")
    if not isinstance(turns, list) or not turns:
        raise bad_request(required_problem("'messages'", turns, "a non-empty array of messages"), param="messages")
    for index, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise bad_request(f"messages[{index}] must be an object, got {type_name(turn)}", param=f"messages[{index}]")
    if body.get("max_tokens") is None and not counting:
        raise bad_request("'max_tokens' is required and must be an integer", param="max_tokens")
    check(body, FIELDS, REQUIRED)
    _check_tools(body)
    if all(turn.get("content") in ([], "") for turn in turns):
        # Else refused once translated, as a chat request with no messages: not what was sent.
        raise bad_request(
            "messages[0].content must hold text or content blocks: every turn's content is empty",
            param="messages[0].content",
        )


def _check_tools(body: dict[str, Any]) -> None:
    """Each tool named (`check` saw to it) by a name no tool before it has; a `tool` choice
    names one."""
    seen: set[str] = set()
    for index, tool in enumerate(body.get("tools") or []):
        at = f"tools[{index}].name"
        name = tool["name"]
        if name in seen:
            raise bad_request(f"{at} {name[:64]!r} names a tool given before it: names must be unique", param=at)
        seen.add(name)
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool":
        name = choice.get("name")
        if not isinstance(name, str) or not name:
            at = "tool_choice.name"
            raise bad_request(required_problem(at, name, "a non-empty string when its type is 'tool'"), param=at)


def system_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The chat messages before the turns: the top-level system prompt, if any."""
    system = _text(body.get("system"), "system", BLOCK_SEPARATOR)
    return [{"role": "system", "content": system}] if system else []


def leading(body: dict[str, Any], messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The chat messages before the turns' (the system prompt), standing for none of them."""
    return system_messages(body), 0


def turn_messages(turn: Any, index: int) -> list[dict[str, Any]]:
    """The chat messages of `messages[index]`: each turn's translation depends on it alone, so
    the turns of a history translated before are reused (router/protocol/prefix_translated.py)."""
    role = turn.get("role") if isinstance(turn, dict) else None
    if role is not None and not isinstance(turn.get("content"), (str, list)):
        raise bad_request(
            required_problem(
                f"messages[{index}].content", turn.get("content"), "a string or an array of content blocks"
            ),
            param=f"messages[{index}].content",
        )
    where = f"messages[{index}].content"
    if role == "user":
        return user_turn(turn.get("content"), where)
    if role == "assistant":
        return [_assistant_turn(turn.get("content"), where)]
    if role == "system":  # Claude Code puts one inside the messages
        return [{"role": "system", "content": _text(turn.get("content"), where, BLOCK_SEPARATOR)}]
    at, roles = f"messages[{index}].role", "'user' or 'assistant'"
    if isinstance(role, str):
        raise bad_request(f"{at} must be {roles}, got {role[:40]!r}", param=at)
    raise bad_request(required_problem(at, role, roles), param=at)


def to_chat(body: dict[str, Any]) -> dict[str, Any]:
    """A Messages request as a chat-completions body; a client's mistake raises a 400."""
    check_request(body)
    messages = system_messages(body)
    for index, turn in enumerate(body["messages"]):
        messages += turn_messages(turn, index)
    return chat_fields(body, messages)


def chat_fields(body: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The chat-completions body of a checked Messages request whose messages are `messages`."""
    chat: dict[str, Any] = {
        "model": body["model"],
        "messages": messages,
        # Not `max_tokens`: OpenAI's reasoning models (o-series, gpt-5) refuse it; vLLM and
        # the other chat servers take this one.
        "max_completion_tokens": body["max_tokens"],
        "stream": bool(body.get("stream", False)),
    }
    # top_k is not a chat-completions field; vLLM (the edge) takes it as an extra one.
    for key in ("temperature", "top_p", "top_k"):
        if key in body:
            chat[key] = body[key]
    chat.update(_output_options(body))
    if body.get("stop_sequences"):
        chat["stop"] = body["stop_sequences"]
    if body.get("tools"):
        chat["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.get("name"),
                    "description": t.get("description", ""),
                    "parameters": t.get("input_schema") or {"type": "object"},
                },
            }
            for t in body["tools"]
        ]
        chat["tool_choice"] = _tool_choice(body.get("tool_choice"))
        choice = body.get("tool_choice")
        if isinstance(choice, dict) and choice.get("disable_parallel_tool_use") is True:
            chat["parallel_tool_calls"] = False
    return chat
