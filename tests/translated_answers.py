"""Scripted chat answers with what tests/fake_upstream.py does not write itself (reasoning, a
refusal, vLLM's `stop_reason`, any finish reason): whole bodies for its `raw` behaviour, plain
or as the chunks of a stream."""

from __future__ import annotations

import re
from typing import Any

import orjson

USAGE = {
    "prompt_tokens": 100,
    "completion_tokens": 20,
    "total_tokens": 120,
    "prompt_tokens_details": {"cached_tokens": 60},
    "completion_tokens_details": {"reasoning_tokens": 7},
}


def _calls(calls: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    return [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        for call_id, name, arguments in calls
    ]


def plain(
    message: dict[str, Any],
    finish: str = "stop",
    stop_reason: str | None = None,
    calls: list[tuple[str, str, str]] | None = None,
) -> dict[str, Any]:
    """A fake-upstream behaviour: a chat completion of `message` (its fields as given)."""
    message = {"role": "assistant", "content": None, **message}
    if calls:
        message["tool_calls"] = _calls(calls)
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
    if stop_reason is not None:
        choice["stop_reason"] = stop_reason
    body = {"id": "chatcmpl-1", "object": "chat.completion", "model": "up", "choices": [choice], "usage": USAGE}
    return {"kind": "raw", "content_type": "application/json", "body": orjson.dumps(body).decode()}


def streamed(
    message: dict[str, Any],
    finish: str = "stop",
    stop_reason: str | None = None,
    calls: list[tuple[str, str, str]] | None = None,
) -> dict[str, Any]:
    """A fake-upstream behaviour: `message` as a stream, each text field in pieces of a few
    characters (in the order given), then the calls, the finish chunk, usage and [DONE]."""
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "up"}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, **extra}
        return b"data: " + orjson.dumps({**base, "choices": [choice]}) + b"\n\n"

    events = [chunk({"role": "assistant", "content": ""})]
    for key, text in message.items():
        events += [chunk({key: piece}) for piece in re.findall(r".{1,6}", text, re.S)]
    for index, (call_id, name, arguments) in enumerate(calls or []):
        start = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        events.append(chunk({"tool_calls": [start]}))
        pieces = re.findall(r".{1,4}", arguments, re.S)
        events += [chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}) for piece in pieces]
    extra = {} if stop_reason is None else {"stop_reason": stop_reason}
    events.append(chunk({}, finish, **extra))
    events.append(b"data: " + orjson.dumps({**base, "choices": [], "usage": USAGE}) + b"\n\n")
    events.append(b"data: [DONE]\n\n")
    return {"kind": "raw", "content_type": "text/event-stream", "body": b"".join(events).decode()}


def sse_types(body: bytes) -> list[str]:
    """The event types of a translated stream, in order."""
    return [line[7:] for line in body.decode().split("\n") if line.startswith("event: ")]


def sse_data(body: bytes) -> list[dict[str, Any]]:
    """The data of a translated stream's events, in order."""
    return [orjson.loads(line[6:]) for line in body.decode().split("\n") if line.startswith("data: ")]
