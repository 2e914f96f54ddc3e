"""Anthropic Messages (`POST /v1/messages`, what Claude Code speaks), translated to and from the
internal chat step: a request becomes a chat-completions body; the answer, plain or streamed,
becomes a Messages answer (message / content-block / delta events)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
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
from router.protocol.sse import ChunkTranslator
from router.protocol.upstream_error import is_overflow, overflow_tokens
from router.protocol.usage import Usage
from router.surfaces.messages.content import user_turn
from router.trajectory import identify

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


def message_id() -> str:
    """A new answer's id. Not the upstream's completion id: Claude Code joins consecutive
    assistant messages of one id into one turn, so an upstream that repeats its ids, or gives
    none, would have it merge answers and resend them as one."""
    return f"msg_{identify.random_hex(12)}"


STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "refusal"}


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
        # thinking blocks stay with the model that wrote them; they are not sent on.
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = calls
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
        "max_tokens": body["max_tokens"],
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


def _usage(usage: Any) -> dict[str, int]:
    counts = Usage.from_openai(usage) or Usage(0, 0, 0)
    return {
        "input_tokens": max(counts.prompt_tokens - counts.cached_tokens, 0),
        "output_tokens": counts.completion_tokens,
        "cache_read_input_tokens": counts.cached_tokens,
    }


def tool_input(arguments: Any) -> dict[str, Any]:
    """A chat tool call's arguments as a `tool_use` block's `input`, which is an object: the
    arguments' JSON object, `{}` for none, else the text as the model wrote it under `_raw`
    (broken JSON, or JSON that is no object)."""
    if not arguments:
        return {}
    try:
        parsed = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {"_raw": arguments}


def from_chat(answer: dict[str, Any], chat: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chat completion as a Messages answer (`chat`: the body it answers)."""
    choice = (answer.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    content: list[dict[str, Any]] = []
    if message.get("content"):
        content.append({"type": "text", "text": message["content"]})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments = tool_input(function.get("arguments") or "")
        content.append(
            {"type": "tool_use", "id": call.get("id", ""), "name": function.get("name", ""), "input": arguments}
        )
    return {
        "id": message_id(),
        "type": "message",
        "role": "assistant",
        "model": answer.get("model", ""),
        "content": content,
        "stop_reason": STOP_REASONS.get(choice.get("finish_reason") or "stop", "end_turn"),
        "stop_sequence": None,
        "usage": _usage(answer.get("usage")),
    }


ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_body(status: int, error: dict[str, Any]) -> bytes:
    """An error in the Messages shape. A context overflow is worded as Anthropic words it
    ("prompt is too long: N tokens > M maximum"), the only wording Claude Code recognises."""
    message = str(error.get("message") or "")
    # A client's mistake the table does not name (405, 408, 415, 422…) is still the client's, not
    # the server's (`api_error`, which a client may retry).
    kind = ERROR_TYPES.get(status, "invalid_request_error" if 400 <= status < 500 else "api_error")
    if is_overflow(status, error):
        kind = "invalid_request_error"
        tokens = overflow_tokens(message)
        detail = f"{tokens[0]} tokens > {tokens[1]} maximum" if tokens else message
        message = f"prompt is too long: {detail}"
    return orjson.dumps({"type": "error", "error": {"type": kind, "message": message}})


def _event(kind: str, data: dict[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps({"type": kind, **data}) + b"\n\n"


@dataclass(slots=True)
class _HeldCall:
    """A tool call held while another tool's block is open: what its deltas gave so far."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamTranslator(ChunkTranslator):
    """Chat-completion SSE chunks in, Messages events out."""

    def __init__(self, input_estimate: int = 0) -> None:
        super().__init__()
        self._started = False
        self._block: tuple[str, int] | None = None  # ("text", -1) or ("tool", tool index)
        self._blocks = itertools.count()
        self._index = -1
        self._stop = "end_turn"
        # Tool calls first seen while another tool's block is open, by chat index, in the order
        # they came. An upstream may interleave its calls' deltas
        # (index 1, then 0 again); a Messages stream has one open block at a time and a block
        # once stopped takes no more input, so these are sent whole, after the open one.
        self._held: dict[int, _HeldCall] = {}
        # The open tool block's arguments so far: sent as one delta when it stops, as an object
        # (`tool_input`), so that a model's broken JSON reaches the client as the whole answer
        # gives it (`{"_raw": ...}`), not as input the client's SDK fails to parse mid-stream.
        self._arguments: list[str] = []
        # message_start goes out before the upstream's usage (the stream's last chunk): it
        # carries an estimate; message_delta carries the upstream's figures.
        self._usage: dict[str, int] = {"input_tokens": input_estimate, "output_tokens": 0}

    def _open(self, key: tuple[str, int], block: dict[str, Any]) -> list[bytes]:
        out = self._close()
        self._block, self._index = key, next(self._blocks)
        out.append(_event("content_block_start", {"index": self._index, "content_block": block}))
        return out

    def _close(self) -> list[bytes]:
        if self._block is None:
            return []
        out = []
        if self._block[0] == "tool":
            text, self._arguments = "".join(self._arguments), []
            if text:
                out.append(self._input_delta(orjson.dumps(tool_input(text)).decode()))
        self._block = None
        out.append(_event("content_block_stop", {"index": self._index}))
        return out

    def on_chunk(self, chunk: dict[str, Any]) -> list[bytes]:
        out: list[bytes] = []
        if not self._started:
            self._started = True
            message = {
                "id": message_id(),
                "type": "message",
                "role": "assistant",
                "model": chunk.get("model", ""),
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": dict(self._usage),
            }
            out.append(_event("message_start", {"message": message}))
        if chunk.get("usage"):
            self._usage = _usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                if self._block != ("text", -1):
                    out += self._release()
                    out += self._open(("text", -1), {"type": "text", "text": ""})
                out.append(
                    _event(
                        "content_block_delta",
                        {"index": self._index, "delta": {"type": "text_delta", "text": delta["content"]}},
                    )
                )
            for call in delta.get("tool_calls") or []:
                out += self._tool_delta(call)
            if choice.get("finish_reason"):
                self._stop = STOP_REASONS.get(choice["finish_reason"], "end_turn")
        return out

    def _tool_delta(self, call: dict[str, Any]) -> list[bytes]:
        """One chat tool-call delta: streamed into its block when that block is the open one (or
        none is), held when another tool's block is open (sent by `_release`)."""
        function = call.get("function") or {}
        index = int(call.get("index", 0))
        key = ("tool", index)
        arguments = function.get("arguments") or ""
        held = self._held.get(index)
        if held is None and self._block != key and self._block is not None and self._block[0] == "tool":
            held = self._held[index] = _HeldCall()
        if held is not None:
            held.id = held.id or call.get("id") or ""
            held.name = held.name or function.get("name") or ""
            held.arguments.append(arguments)
            return []
        out: list[bytes] = []
        if self._block != key:
            block = {"type": "tool_use", "id": call.get("id", ""), "name": function.get("name", ""), "input": {}}
            out += self._open(key, block)
        self._arguments.append(arguments)
        return out

    def _input_delta(self, partial_json: str) -> bytes:
        delta = {"type": "input_json_delta", "partial_json": partial_json}
        return _event("content_block_delta", {"index": self._index, "delta": delta})

    def _release(self) -> list[bytes]:
        """The held tool calls, each a whole block after the open one (which this stops)."""
        out = self._close()
        held, self._held = self._held, {}
        for index, call in held.items():
            out += self._open(("tool", index), {"type": "tool_use", "id": call.id, "name": call.name, "input": {}})
            self._arguments = call.arguments
            out += self._close()
        return out

    def on_done(self) -> list[bytes]:
        out = self._release()
        out.append(
            _event(
                "message_delta",
                {
                    "delta": {"stop_reason": self._stop, "stop_sequence": None},
                    "usage": dict(self._usage),
                },
            )
        )
        out.append(_event("message_stop", {}))
        return out

    def on_error(self, error: dict[str, Any]) -> list[bytes]:
        code = error.get("code")
        status = code if isinstance(code, int) else 500
        payload = orjson.loads(error_body(status, error))
        return [_event("error", {"error": payload["error"]})]
