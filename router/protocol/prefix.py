"""Parse a chat body that extends one parsed before, parsing only what is new.

An agent resends its whole history at every step: its next body is, byte for byte, its last
body up to the end of the last message, then the new messages, then the same trailing fields.
The prefix check is one `memcmp`; the new messages and the trailing fields are parsed; the old
messages are the objects parsed before (never mutated: the gateway copies a message to change
it). So a step costs its new bytes, not its history: ~0.1 ms instead of ~0.65 ms at 370 KB.

Exactness: a body is taken this way only when it splits into pieces that each parse, and whose
concatenation is then valid JSON with one parse: the prefix `P` (verified once to be the head,
`"messages":[` and whole messages: `P[array_at:] + "]"` parses as an array), a comma, the new
messages (`"[" + … + "]"` parses), `]`, and the trailing fields (`"{" + … ` parses, without a
second `messages` key). Anything else, a prefix that does not match, or a check that would fail
(depth, a message's shape): the whole body is parsed by `parse_chat_request`, which also writes
the error a client gets. The result equals that parse's (tests/test_prefix_parse.py).

What is kept is bounded in bytes (`limits.reuse_parse_bytes`, least recently used dropped) and
keyed by the client key's namespace, so one tenant's timing cannot probe another's history.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

from router.errors import GatewayError
from router.protocol.chat import ChatRequest, check_messages, parse_chat_request
from router.protocol.fields import check_depth, check_fields

WHITESPACE = b" \t\r\n"
KEY_BYTES = 1024  # a body's first bytes name its bucket
# Smaller bodies are parsed whole (~25 µs at 32 KB): what keeping them would save is less than
# what it costs in memory (a gateway holding 1,000 short trajectories, benchmarks/memory).
MIN_BYTES = 64 * 1024
PER_BUCKET = 4  # trajectories that share their first KEY_BYTES (one agent's system prompt)
MAX_TRIES = 8  # occurrences of a key name tried when looking for where a piece starts
# What an entry holds, as tracemalloc measured it (3.7-6x its prefix's bytes): the prefix, our
# encoding of the messages (about as long), the parsed objects (as long again, plus ~600 bytes
# of dicts and headers per message); an entry not yet reused holds its prefix and its head.
MESSAGE_COST = 600
UNVERIFIED_COST = 1024


@dataclass(slots=True)
class _Known:
    """A body parsed before, up to the end of its last message."""

    prefix: bytes  # the client's bytes through the last message's closing brace
    array_at: int  # where the messages array opens in `prefix`
    head: dict[str, Any]  # the top-level fields before "messages", parsed
    tail_key: str | None  # the first field after the messages, where the next body is searched
    messages: list[dict[str, Any]] | None  # None until verified (made from a whole parse)
    encoded: bytes | None  # the messages as we encode them, without the closing bracket
    cost: int  # bytes counted against the budget


class PrefixParser:
    """`parse(body, namespace)`: a `ChatRequest` equal to `parse_chat_request(body)`'s."""

    def __init__(self, budget_bytes: int, max_depth: int, min_bytes: int = MIN_BYTES) -> None:
        self.budget_bytes = budget_bytes
        self.max_depth = max_depth
        self.min_bytes = max(min_bytes, KEY_BYTES + 1)
        self.held_bytes = 0
        self.reused = 0  # bodies parsed from a known prefix
        self.whole = 0  # bodies parsed whole
        self._buckets: OrderedDict[tuple[str, bytes], list[_Known]] = OrderedDict()

    def parse(self, body: bytes, namespace: str = "") -> ChatRequest:
        if self.budget_bytes <= 0 or len(body) < self.min_bytes:
            self.whole += 1
            return parse_chat_request(body, self.max_depth)
        key = (namespace, body[:KEY_BYTES])
        bucket = self._buckets.get(key)
        known = next((known for known in bucket if body.startswith(known.prefix)), None) if bucket else None
        if known is not None:
            assert bucket is not None
            self._drop(key, bucket, known)
            try:
                extended = _extend(known, body, self.max_depth)
            except (orjson.JSONDecodeError, GatewayError):
                extended = None
            if extended is not None:
                request, after = extended
                self._keep(key, after)
                self.reused += 1
                return request
        self.whole += 1
        request = parse_chat_request(body, self.max_depth)
        learned = _learn(body, request)
        if learned is not None:
            self._keep(key, learned)
        return request

    def _keep(self, key: tuple[str, bytes], known: _Known) -> None:
        if known.cost > self.budget_bytes:
            return
        bucket = self._buckets.setdefault(key, [])
        self._buckets.move_to_end(key)
        bucket.insert(0, known)
        self.held_bytes += known.cost
        if len(bucket) > PER_BUCKET:
            self._drop(key, bucket, bucket[-1])
        while self.held_bytes > self.budget_bytes:
            oldest_key, oldest = next(iter(self._buckets.items()))
            self._drop(oldest_key, oldest, oldest[-1])

    def _drop(self, key: tuple[str, bytes], bucket: list[_Known], known: _Known) -> None:
        bucket.remove(known)
        self.held_bytes -= known.cost
        if not bucket:
            del self._buckets[key]


def _learn(body: bytes, request: ChatRequest) -> _Known | None:
    """Where `body` (parsed whole) ends its last message; checked at its first reuse."""
    keys = list(request.raw)
    at = keys.index("messages")
    array_at = _array_start(body, at > 0)
    if array_at is None:
        return None
    tail_key = keys[at + 1] if at + 1 < len(keys) else None
    found = _array_close(body, array_at + 1, tail_key)
    if found is None:
        return None
    end = len(body[: found[0]].rstrip(WHITESPACE))
    if body[end - 1 : end] != b"}":
        return None
    head = {key: request.raw[key] for key in keys[:at]}
    return _Known(body[:end], array_at, head, tail_key, None, None, end + UNVERIFIED_COST)


def _array_start(body: bytes, has_head: bool) -> int | None:
    """Where the top-level "messages" array opens: the first occurrence of the key after which
    the bytes before it close as an object (so it is a key of the top level, not nested)."""
    start = 0
    for _ in range(MAX_TRIES):
        at = body.find(b'"messages"', start)
        if at < 0:
            return None
        start = at + 1
        before = body[:at].rstrip(WHITESPACE)
        if has_head:
            if not before.endswith(b","):
                continue
            try:
                orjson.loads(before[:-1] + b"}")
            except orjson.JSONDecodeError:
                continue
        elif before != b"{":
            continue
        value = body[at + len(b'"messages"') :].lstrip(WHITESPACE)
        if not value.startswith(b":"):
            continue
        value = value[1:].lstrip(WHITESPACE)
        if value.startswith(b"["):
            return len(body) - len(value)
    return None


def _array_close(body: bytes, start: int, tail_key: str | None) -> tuple[int, dict[str, Any]] | None:
    """Where the messages array closes (at or after `start`), and the fields after it parsed:
    before the first trailing field (the last occurrence of its name from which the rest parses
    as the end of an object, so a key of the top level), else before the closing `}`."""
    if tail_key is None:
        stripped = body.rstrip(WHITESPACE)
        if not stripped.endswith(b"}"):
            return None
        close = stripped[:-1].rstrip(WHITESPACE)
        return (len(close) - 1, {}) if close.endswith(b"]") and len(close) - 1 >= start else None
    name = orjson.dumps(tail_key)
    end = len(body)
    for _ in range(MAX_TRIES):
        at = body.rfind(name, start, end)
        if at < 0:
            return None
        end = at
        before = body[:at].rstrip(WHITESPACE)
        if not before.endswith(b","):
            continue
        close = before[:-1].rstrip(WHITESPACE)
        if not close.endswith(b"]") or len(close) - 1 < start:
            continue
        try:
            tail = orjson.loads(b"{" + body[at:])
        except orjson.JSONDecodeError:
            continue
        return len(close) - 1, tail
    return None


def _extend(known: _Known, body: bytes, max_depth: int) -> tuple[ChatRequest, _Known] | None:
    """`body` as `known`'s prefix and what follows it, or None when it is not that."""
    if known.messages is None or known.encoded is None:
        # First reuse of a prefix found in a whole parse: check that it is what it was taken for.
        old = orjson.loads(known.prefix[known.array_at :] + b"]")
        if not isinstance(old, list) or not old:
            return None
        known.messages = old
        known.encoded = orjson.dumps(old)[:-1]
    rest = body[len(known.prefix) :]
    found = _array_close(rest, 0, known.tail_key)
    if found is None and known.tail_key is not None:
        found = _array_close(rest, 0, None)  # the trailing fields are gone
    if found is None:
        return None
    close, tail = found
    if "messages" in tail:
        return None
    added = rest[:close].strip(WHITESPACE)
    messages = list(known.messages)
    encoded = known.encoded
    if added:
        if not added.startswith(b","):
            return None
        new = orjson.loads(b"[" + added[1:] + b"]")
        if not isinstance(new, list) or not new:
            return None
        encoded = b"".join((encoded, b",", check_depth(new, max_depth - 1)[1:-1]))
        messages += check_messages(new)
    raw = {**known.head, "messages": messages, **tail}
    model = raw.get("model")
    if not isinstance(model, str) or not model:
        return None
    check_fields(raw)
    serialised = _serialised(raw, model, encoded, max_depth)
    request = ChatRequest(
        raw=raw,
        model=model,
        stream=raw.get("stream") or False,
        messages=messages,
        size=len(body),
        serialised=memoryview(serialised),
    )
    end = len(known.prefix) + len(rest[:close].rstrip(WHITESPACE))
    tail_key = next(iter(tail), None)
    cost = 3 * end + MESSAGE_COST * len(messages)
    after = _Known(body[:end], known.array_at, known.head, tail_key, messages, encoded, cost)
    return request, after


def _serialised(raw: dict[str, Any], model: str, encoded: bytes, max_depth: int) -> bytes:
    """The bytes `chat_request` makes for `raw` (model first, then the client's order: a retry
    is known by them), with the messages' encoding reused instead of made again."""
    keys = list(raw)
    at = keys.index("messages")
    parts: list[bytes | memoryview] = [b'{"model":', orjson.dumps(model)]
    before = {key: raw[key] for key in keys[:at] if key != "model"}
    if before:
        parts += [b",", check_depth(before, max_depth)[1:-1]]
    parts += [b',"messages":', encoded, b"]"]
    after = {key: raw[key] for key in keys[at + 1 :] if key != "model"}
    if after:
        parts += [b",", check_depth(after, max_depth)[1:-1]]
    parts.append(b"}")
    return b"".join(parts)
