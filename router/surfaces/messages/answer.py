"""A chat step's answer as an Anthropic Messages answer, plain or streamed (message /
content-block / delta events), and errors in the Messages shape (translate.py turns the request
into the chat step).

What the chat answer says beyond its text and tool calls is kept: its reasoning becomes a
`thinking` block before them (signed with an opaque digest, `thinking_signature`); a refusal is
a text block with stop reason `refusal`; a stop string vLLM names (`choices[].stop_reason`) is
the `stop_sequence` when the request asked for it; and an answer that calls a tool stops with
`tool_use` whatever finish reason the upstream gave (OpenAI and vLLM say `stop` for a call forced
by a named tool choice).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
from dataclasses import dataclass, field
from typing import Any

import orjson

from router.protocol.completion_shape import reasoning_text
from router.protocol.sse import ChunkTranslator
from router.protocol.upstream_error import is_overflow, overflow_tokens
from router.protocol.usage import Usage
from router.trajectory import identify

STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "refusal"}
# The signature of a thinking block this gateway wrote: a client sends it back with the block and
# it is not read (the block's text is); a digest of that text, so it carries nothing the block
# does not, and names no key.
SIGNATURE_PREFIX = "tandem:"


def call_id(given: object) -> str:
    """A tool call's id, or a new one where the upstream gave it none or an empty one (Gemini's
    OpenAI-compatible endpoint, NVIDIA NIM, older llama.cpp): the client answers a `tool_use`
    by its id, and two calls of one answer without ids could not be told apart."""
    return given if isinstance(given, str) and given else f"toolu_{identify.random_hex(12)}"


def message_id() -> str:
    """A new answer's id. Not the upstream's completion id: Claude Code joins consecutive
    assistant messages of one id into one turn, so an upstream that repeats its ids, or gives
    none, would have it merge answers and resend them as one."""
    return f"msg_{identify.random_hex(12)}"


def thinking_signature(digest: Any) -> str:
    """The signature of a thinking block whose text `digest` (a sha256 object) has read."""
    return SIGNATURE_PREFIX + base64.urlsafe_b64encode(digest.digest()[:18]).decode()


def stop_reason(
    finish: str | None, called: bool, refused: bool, matched: str | None, stop_sequences: Any
) -> tuple[str, str | None]:
    """The Messages `stop_reason` and `stop_sequence` of an answer whose chat finish reason is
    `finish`, that `called` a tool or not, `refused` or not, and whose stop string (vLLM's
    `stop_reason`) is `matched`: a cut-short answer says so first; a matched string counts only
    when it is one of the request's `stop_sequences` (vLLM also names its own stop strings)."""
    if finish == "length":
        return "max_tokens", None
    if finish == "content_filter" or refused:
        return "refusal", None
    if called:
        return "tool_use", None
    asked = stop_sequences if isinstance(stop_sequences, list) else ()
    if matched is not None and finish in (None, "stop") and matched in asked:
        return "stop_sequence", matched
    return STOP_REASONS.get(finish or "stop", "end_turn"), None


def usage(counts: Any) -> dict[str, int]:
    """An upstream's chat usage in Messages' names (the prompt less its cached part is the input)."""
    read = Usage.from_openai(counts) or Usage(0, 0, 0)
    return {
        "input_tokens": max(read.prompt_tokens - read.cached_tokens, 0),
        "output_tokens": read.completion_tokens,
        "cache_read_input_tokens": read.cached_tokens,
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


def _content(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A chat answer's message as content blocks: thinking, text, refusal text, tool uses."""
    content: list[dict[str, Any]] = []
    thinking = reasoning_text(message)
    if thinking:
        signature = thinking_signature(hashlib.sha256(thinking.encode()))
        content.append({"type": "thinking", "thinking": thinking, "signature": signature})
    for key in ("content", "refusal"):
        if isinstance(message.get(key), str) and message[key]:
            content.append({"type": "text", "text": message[key]})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments = tool_input(function.get("arguments") or "")
        content.append(
            {"type": "tool_use", "id": call_id(call.get("id")), "name": function.get("name", ""), "input": arguments}
        )
    return content


def from_chat(answer: dict[str, Any], chat: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chat completion as a Messages answer (`chat`: the body it answers)."""
    choice = (answer.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    content = _content(message)
    matched = choice.get("stop_reason")
    reason, sequence = stop_reason(
        choice.get("finish_reason"),
        any(block["type"] == "tool_use" for block in content),
        isinstance(message.get("refusal"), str) and bool(message["refusal"]),
        matched if isinstance(matched, str) else None,
        (chat or {}).get("stop"),
    )
    return {
        "id": message_id(),
        "type": "message",
        "role": "assistant",
        "model": answer.get("model", ""),
        "content": content,
        "stop_reason": reason,
        "stop_sequence": sequence,
        "usage": usage(answer.get("usage")),
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


THINKING = ("thinking", -1)
TEXT = ("text", -1)


class StreamTranslator(ChunkTranslator):
    """Chat-completion SSE chunks in, Messages events out (`stop_sequences`: the request's, the
    chat body's `stop`)."""

    def __init__(self, input_estimate: int = 0, stop_sequences: Any = None) -> None:
        super().__init__()
        self._started = False
        self._block: tuple[str, int] | None = None  # THINKING, TEXT or ("tool", tool index)
        self._blocks = itertools.count()
        self._index = -1
        self._stop_sequences = stop_sequences
        # What the stop reason is made of at the end (`stop_reason`).
        self._finish: str | None = None
        self._matched: str | None = None
        self._called = False
        self._refused = False
        # The open thinking block's text so far, as its digest: its signature goes out when it
        # stops (Anthropic's streams send a signature_delta last in a thinking block).
        self._thinking = hashlib.sha256()
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
        elif self._block == THINKING:
            signature = thinking_signature(self._thinking)
            out.append(self._delta({"type": "signature_delta", "signature": signature}))
        self._block = None
        out.append(_event("content_block_stop", {"index": self._index}))
        return out

    def _delta(self, delta: dict[str, Any]) -> bytes:
        return _event("content_block_delta", {"index": self._index, "delta": delta})

    def _start(self, chunk: dict[str, Any]) -> bytes:
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
        return _event("message_start", {"message": message})

    def on_chunk(self, chunk: dict[str, Any]) -> list[bytes]:
        out = [] if self._started else [self._start(chunk)]
        if chunk.get("usage"):
            self._usage = usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("reasoning_content"):
                out += self._thinking_delta(delta["reasoning_content"])
            if delta.get("content"):
                out += self._text_delta(delta["content"])
            if delta.get("refusal"):
                # A refusal is the model's words: a text block, and the stop reason says it.
                self._refused = True
                out += self._text_delta(delta["refusal"])
            for call in delta.get("tool_calls") or []:
                out += self._tool_delta(call)
            if choice.get("finish_reason"):
                self._finish = choice["finish_reason"]
            if choice.get("stop_reason"):
                self._matched = choice["stop_reason"]
        return out

    def _thinking_delta(self, text: str) -> list[bytes]:
        out: list[bytes] = []
        if self._block != THINKING:
            out += self._release()
            out += self._open(THINKING, {"type": "thinking", "thinking": "", "signature": ""})
            self._thinking = hashlib.sha256()
        self._thinking.update(text.encode())
        out.append(self._delta({"type": "thinking_delta", "thinking": text}))
        return out

    def _text_delta(self, text: str) -> list[bytes]:
        out: list[bytes] = []
        if self._block != TEXT:
            out += self._release()
            out += self._open(TEXT, {"type": "text", "text": ""})
        out.append(self._delta({"type": "text_delta", "text": text}))
        return out

    def _tool_delta(self, call: dict[str, Any]) -> list[bytes]:
        """One chat tool-call delta: streamed into its block when that block is the open one (or
        none is), held when another tool's block is open (sent by `_release`)."""
        self._called = True
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
            block = {"type": "tool_use", "id": call_id(call.get("id")), "name": function.get("name", ""), "input": {}}
            out += self._open(key, block)
        self._arguments.append(arguments)
        return out

    def _input_delta(self, partial_json: str) -> bytes:
        return self._delta({"type": "input_json_delta", "partial_json": partial_json})

    def _release(self) -> list[bytes]:
        """The held tool calls, each a whole block after the open one (which this stops)."""
        out = self._close()
        held, self._held = self._held, {}
        for index, call in held.items():
            block = {"type": "tool_use", "id": call_id(call.id), "name": call.name, "input": {}}
            out += self._open(("tool", index), block)
            self._arguments = call.arguments
            out += self._close()
        return out

    def on_done(self) -> list[bytes]:
        out = self._release()
        reason, sequence = stop_reason(self._finish, self._called, self._refused, self._matched, self._stop_sequences)
        delta = {"stop_reason": reason, "stop_sequence": sequence}
        out.append(_event("message_delta", {"delta": delta, "usage": dict(self._usage)}))
        out.append(_event("message_stop", {}))
        return out

    def on_error(self, error: dict[str, Any]) -> list[bytes]:
        code = error.get("code")
        status = code if isinstance(code, int) else 500
        payload = orjson.loads(error_body(status, error))
        return [_event("error", {"error": payload["error"]})]
