"""Chat completions: parse and check a client's request, and build what an upstream receives.

The client's JSON object is kept whole (`raw`) so that every field we do not know passes through
unchanged; the typed attributes are the few the gateway itself reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NoReturn

import orjson

from router.errors import GatewayError, bad_request
from router.protocol.containers import check_containers
from router.protocol.fields import (
    MAX_JSON_DEPTH,
    calls_problem,
    check_depth,
    check_fields,
    required_problem,
    too_deep,
    type_name,
)
from router.protocol.prefix_encoded import serialised_with
from router.protocol.tool_fields import check_tool_fields
from router.protocol.usage import Usage


@dataclass(slots=True)
class ChatRequest:
    raw: dict[str, Any]
    model: str
    stream: bool
    messages: list[dict[str, Any]]
    size: int = 0  # bytes of the client's body
    # The request serialised with `model` as its first key (by the depth check): a body that
    # goes as the client sent it is this with the model swapped, not the history serialised again.
    serialised: memoryview | None = None
    # Where the messages array lies in `serialised`: an upstream whose body drops fields or
    # merges stream options gets those bytes around the other fields encoded again, not all.
    messages_span: tuple[int, int] | None = None
    # What a translated surface's own body says of its sender (session ids, `user`, `metadata`)
    # that its chat body does not carry upstream: read instead of `raw` to find the run.
    said: dict[str, Any] | None = None

    def encoded(self) -> bytes | memoryview:
        """The request as JSON (the client's body re-encoded with `model` first, by the depth check)."""
        return self.serialised if self.serialised is not None else orjson.dumps(self.raw)

    def upstream_body(
        self, model: str, drop_params: frozenset[str], raw: dict[str, Any] | None = None
    ) -> tuple[bytes, list[str]]:
        """The body an upstream receives, and which of the client's keys were dropped for it."""
        if (raw is None or raw is self.raw) and self.serialised is not None:
            dropped = [key for key in drop_params if key in self.raw]
            edited = self._edited(model, dropped)
            if edited is not None:
                return edited, dropped
        body = dict(self.raw if raw is None else raw)
        body["model"] = model
        dropped = [key for key in drop_params if key in body]
        for key in dropped:
            del body[key]
        if self.stream:
            # Ask for the final usage chunk: the ledger needs it and some clients count on it.
            options = body.get("stream_options")
            body["stream_options"] = {**(options or {}), "include_usage": True}
        return orjson.dumps(body), dropped

    def body_with_messages(
        self, model: str, drop_params: frozenset[str], raw: dict[str, Any], messages: list[bytes]
    ) -> tuple[bytes, list[str]]:
        """`upstream_body` for `raw` whose messages come encoded one by one (a redacted history,
        each message encoded once when it was first redacted): the other fields are encoded,
        model first, and the messages joined after them."""
        dropped = [key for key in drop_params if key in raw]
        if "messages" in dropped:
            return self.upstream_body(model, drop_params, raw)
        parts = [self._fields_before_messages(model, raw, dropped), b',"messages":[']
        for index, message in enumerate(messages):
            if index:
                parts.append(b",")
            parts.append(message)
        parts.append(b"]}")
        return b"".join(parts), dropped

    def _edited(self, model: str, dropped: list[str]) -> bytes | None:
        """`serialised` with `model` in the first key's place (and the usage chunk asked for when
        streaming), or None when more must change (parameters to drop, options to merge)."""
        assert self.serialised is not None
        head = b'{"model":' + orjson.dumps(self.model)
        if self.serialised[: len(head)] != head:
            return None
        if dropped:
            return self._rebuilt(model, dropped)
        edited: list[bytes | memoryview] = [b'{"model":', orjson.dumps(model)]
        if self.stream:
            options = self.raw.get("stream_options", None)
            if "stream_options" not in self.raw:
                edited.append(b',"stream_options":{"include_usage":true}')
            elif not (isinstance(options, dict) and options.get("include_usage") is True):
                return self._rebuilt(model, dropped)
        edited.append(self.serialised[len(head) :])
        return b"".join(edited)

    def _rebuilt(self, model: str, dropped: list[str]) -> bytes | None:
        """The upstream's body with fields dropped or stream options merged: every field but
        the messages encoded again (model first, the messages last), the messages' bytes as
        `serialised` holds them; None when their place there is not known."""
        if self.messages_span is None or self.serialised is None or "messages" in dropped:
            return None
        start, end = self.messages_span
        head = self._fields_before_messages(model, self.raw, dropped)
        return b"".join((head, b',"messages":', self.serialised[start:end], b"}"))

    def _fields_before_messages(self, model: str, raw: dict[str, Any], dropped: list[str]) -> bytes:
        """The upstream body up to its messages: `raw`'s other fields encoded, `model` first,
        the dropped ones left out and the usage chunk asked for when streaming (the object
        left open for the messages to follow)."""
        kept = (*dropped, "messages", "model")
        fields = {key: value for key, value in raw.items() if key not in kept}
        if self.stream:
            options = fields.get("stream_options")
            fields["stream_options"] = {**(options if isinstance(options, dict) else {}), "include_usage": True}
        return orjson.dumps({"model": model, **fields})[:-1]


# The roles of the chat API, and `ipython` (Llama's tool results, which vLLM serves).
ROLES = frozenset(("system", "developer", "user", "assistant", "tool", "function", "ipython"))


def check_messages(messages: object) -> list[dict[str, Any]]:
    if not isinstance(messages, list) or not messages:
        got = type_name(messages) if not isinstance(messages, list) else "an empty array"
        raise bad_request(f"'messages' must be a non-empty array of messages, got {got}", param="messages")
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise bad_request(
                f"messages[{index}] must be an object, got {type_name(message)}", param=f"messages[{index}]"
            )
        role = message.get("role")
        if not isinstance(role, str):
            where = f"messages[{index}].role"
            raise bad_request(required_problem(where, role, "a string"), param=where)
        if role not in ROLES:
            raise bad_request(
                f"messages[{index}].role must be one of {', '.join(sorted(ROLES))}, got {role[:40]!r}",
                param=f"messages[{index}].role",
            )
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise bad_request(
                f"messages[{index}].content must be a string or an array of content parts, got {type_name(content)}",
                param=f"messages[{index}].content",
            )
        if isinstance(content, list):
            for number, part in enumerate(content):
                if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                    _refuse_part(part, index, number)
                if part["type"] in PART_VALUES:
                    found = part_problem(part, index, number)
                    if found is not None:
                        raise bad_request(found[1], param=found[0])
        calls = message.get("tool_calls")
        if calls is not None:
            _check_calls(calls, f"messages[{index}].tool_calls")
        for key in STRING_MEMBERS:
            value = message.get(key)
            if value is not None and not isinstance(value, str):
                where = f"messages[{index}].{key}"
                raise bad_request(f"{where} must be a string, got {type_name(value)}", param=where)
    return messages


# A message's members the API types as strings, besides its content: sent on as a number, a
# tool result's `tool_call_id` matched no call (the upstream's 400, or a model that reads a
# result of no call) and a `name` reached the chat template as it was.
STRING_MEMBERS = ("name", "tool_call_id", "refusal")


def _refuse_part(part: object, index: int, number: int) -> NoReturn:
    """A 400 for content part `number` of message `index` that is no object with a string
    `type`: its `type` named where the part is an object."""
    where = f"messages[{index}].content[{number}]"
    if not isinstance(part, dict):
        raise bad_request(
            f"{where} must be a content part (an object with a string 'type'), got {type_name(part)}", param=where
        )
    kind = part.get("type")
    raise bad_request(
        required_problem(f"{where}.type", kind, "a string (a content part is an object with a string 'type')"),
        param=f"{where}.type",
    )


# The content parts whose value (the member named by their type) the API types: sent on
# mistyped (`"image_url": 5`), they were the upstream's error or crash for the client's mistake.
PART_VALUES = frozenset(("text", "image_url", "input_audio", "file"))


def part_problem(part: dict[str, Any], index: int, number: int) -> tuple[str, str] | None:
    """(the member's path, what is wrong with it) for the content part `number` of message
    `index`, of a type in `PART_VALUES`, or None: a text part's `text` is a string, an image's
    `image_url` an object with a non-empty string `url` (or a URL as a string), an audio's
    `input_audio` and a file's `file` objects. Checked on every part of every request: a path
    is formatted only for a part that is wrong."""
    kind = part["type"]
    value = part.get(kind)
    member, wanted = "", ""
    if kind == "text":
        if not isinstance(value, str):
            wanted = "a string"
    elif kind == "image_url":
        if isinstance(value, dict):
            value = value.get("url")
            if not isinstance(value, str) or not value:
                member, wanted = ".url", "a non-empty string (a URL or a data URL)"
        elif not isinstance(value, str) or not value:
            wanted = "an object with a 'url' (or a URL as a string)"
    elif not isinstance(value, dict):
        wanted = "an object"
    if not wanted:
        return None
    at = f"messages[{index}].content[{number}].{kind}{member}"
    return at, required_problem(at, value, wanted)


def _check_calls(calls: object, where: str) -> None:
    """An assistant message's tool calls: what the gateway reads of them (to stitch, judge and
    redact) must have the API's types."""
    found = calls_problem(calls, where)
    if found is not None:
        raise bad_request(found[1], param=found[0])


def parse_chat_request(body: bytes, max_depth: int = MAX_JSON_DEPTH) -> ChatRequest:
    """Parse a `/chat/completions` body; a client's mistake raises a 400 that names it."""
    if not body.strip():
        raise bad_request("request body is empty; expected a JSON object")
    check_containers(body)
    try:
        raw = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if str(exc).startswith("depth limit"):  # orjson stops parsing at 1024 levels
            raise too_deep(max_depth) from exc
        raise not_json(body, exc) from exc
    if not isinstance(raw, dict):
        raise bad_request(f"request body must be a JSON object, got {type_name(raw)}")
    return chat_request(raw, len(body), max_depth)


def not_json(body: bytes, exc: Exception) -> GatewayError:
    """The 400 of a body the JSON parser refused: bytes that are not UTF-8 named as such (the
    parser says "surrogates not allowed" at char 0, wherever the byte is)."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as bad:
        byte = body[bad.start : bad.start + 1]
        return bad_request(
            f"request body is not valid UTF-8 (byte {bad.start}: {byte!r}); JSON must be UTF-8",
            code="invalid_json",
        )
    if "number is infinity" in str(exc):
        # Valid JSON, but past what a 64-bit float holds (a 400-digit integer, `1e400`).
        return bad_request(
            "request body holds a number too large to read (over what a 64-bit float holds)", code="invalid_json"
        )
    return bad_request(f"request body is not valid JSON: {exc}", code="invalid_json")


def chat_request(raw: dict[str, Any], size: int, max_depth: int = MAX_JSON_DEPTH) -> ChatRequest:
    """Check a chat request already parsed (a client's body, or another surface's request
    translated); a client's mistake raises a 400 that names it. `size`: the client's bytes."""
    model = raw.get("model")
    # Serialised once, for the depth check and for an upstream that gets the body unchanged:
    # in three pieces (the fields before the messages, the messages, the fields after), one
    # pass in all, so that the messages' place in it is known (ChatRequest.messages_span).
    span: tuple[int, int] | None = None
    if isinstance(model, str) and "messages" in raw:
        array = check_depth(raw["messages"], max_depth - 1, max_depth)
        whole, span = serialised_with(raw, "messages", [array], max_depth)
        serialised = memoryview(whole)
    else:
        serialised = check_depth(raw, max_depth)
    if not isinstance(model, str) or not model:
        raise bad_request(required_problem("'model'", model, "a non-empty string"), param="model")
    messages = check_messages(raw.get("messages"))
    check_fields(raw)
    check_tool_fields(raw)
    stream = raw.get("stream") or False
    return ChatRequest(raw, model, stream, messages, size, serialised, span)


def encoded_request(
    raw: dict[str, Any], messages: list[dict[str, Any]], array: list[bytes | memoryview], size: int, max_depth: int
) -> ChatRequest | None:
    """A request whose messages were checked and encoded before (`array`, the pieces of their
    JSON array): the rest checked, and its bytes made as `chat_request` makes them; None when
    its model is missing (the whole parse says so). A bad field raises its 400."""
    model = raw.get("model")
    if not isinstance(model, str) or not model:
        return None
    check_fields(raw)
    check_tool_fields(raw)
    serialised, span = serialised_with(raw, "messages", array, max_depth)
    return ChatRequest(raw, model, raw.get("stream") or False, messages, size, memoryview(serialised), span)


@dataclass(slots=True)
class Answer:
    """What the ledger reads of a non-streamed answer."""

    usage: Usage | None = None
    tools: list[str] = field(default_factory=list)
    text: str = ""


def answer_of(parsed: Any) -> Answer:
    """What the ledger reads of a chat completion already parsed."""
    if not isinstance(parsed, dict):
        return Answer()
    answer = Answer(usage=Usage.from_openai(parsed.get("usage")))
    parts: list[str] = []
    for choice in parsed.get("choices") or ():
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        if isinstance(message.get("content"), str):
            parts.append(message["content"])
        for call in message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                if isinstance(function.get("name"), str):
                    answer.tools.append(function["name"])
                if isinstance(function.get("arguments"), str):
                    parts.append(function["arguments"])
    answer.text = "".join(parts)
    return answer


def chunk_event(
    completion_id: str, model: str, created: int, choices: list[dict[str, Any]], usage: dict[str, Any] | None = None
) -> bytes:
    """One `chat.completion.chunk` as a server-sent event: choices (each a `delta`), or none and
    the usage (the last chunk of a stream that asked for `include_usage`). The one builder of
    chunks: the gateway's own streams and the simulator's."""
    chunk: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": choices,
    }
    if usage is not None:
        chunk["usage"] = usage
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def completion_to_sse(answer: dict[str, Any]) -> bytes:
    """A complete chat completion as the stream a streaming client expects: a role chunk, the
    content, each tool call whole, the finish chunk, the usage chunk and [DONE]."""
    completion_id = answer.get("id", "chatcmpl-tandem")
    model, created = answer.get("model", ""), answer.get("created", 0)

    def chunk(index: int, delta: dict[str, Any], finish: str | None = None) -> bytes:
        return chunk_event(completion_id, model, created, [{"index": index, "delta": delta, "finish_reason": finish}])

    parts: list[bytes] = []
    for choice in answer.get("choices") or ():
        index = int(choice.get("index", 0))
        message = choice.get("message") or {}
        parts.append(chunk(index, {"role": "assistant", "content": ""}))
        for key in ("reasoning_content", "reasoning"):
            if isinstance(message.get(key), str) and message[key]:
                parts.append(chunk(index, {key: message[key]}))
        if isinstance(message.get("content"), str) and message["content"]:
            parts.append(chunk(index, {"content": message["content"]}))
        for position, call in enumerate(message.get("tool_calls") or ()):
            parts.append(chunk(index, {"tool_calls": [{"index": position, **call}]}))
        parts.append(chunk(index, {}, choice.get("finish_reason") or "stop"))
    if answer.get("usage") is not None:
        parts.append(chunk_event(completion_id, model, created, [], usage=answer["usage"]))
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)
