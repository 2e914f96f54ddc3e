"""Byte-level help for parsing a body from one parsed before (router/protocol/prefix.py): where a
top-level array opens and closes, where its items end, and how much of a known body a new one
still shares. Nothing here parses a whole body: each function reads the bytes it is pointed at.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

WHITESPACE = b" \t\r\n"
MAX_TRIES = 8  # occurrences of a key name tried when looking for where a piece starts
# Each try parses the piece it would cut off (the fields before the array, or after it): a
# body built to make every try fail costs at most MAX_TRIES parses of this many bytes, not of
# the body. Real heads are a model name and a few settings; real tails, tool schemas.
MAX_HEAD_BYTES = 64 * 1024
MAX_TAIL_BYTES = 1024 * 1024
# Bytes compared just before a boundary before the whole shared part is: a body of another
# trajectory in the same bucket (the same system prompt) differs there, at the cost of no copy.
PROBE_WINDOW = 256
# A JSON string (escapes skipped) or a bracket: enough to find where the items of a valid array
# end (~5 µs/KB in CPython: for a step's new bytes, never for a whole body).
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_OPENERS = frozenset(b"[{")
# After a string closes, JSON allows only these (and whitespace): a compact encoding whose first
# key starts with none of them cannot be a suffix of another encoding of the same value (see
# `chain_ends`).
_AFTER_STRING = frozenset(b' \t\r\n:,}]"')


def array_start(body: bytes, name: bytes, has_head: bool) -> int | None:
    """Where the top-level array `name` (a quoted key) opens: the first occurrence of the key
    after which the bytes before it close as an object (so it is a key of the top level)."""
    start = 0
    for _ in range(MAX_TRIES):
        at = body.find(name, start)
        if at < 0 or at > MAX_HEAD_BYTES:
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
        value = body[at + len(name) :].lstrip(WHITESPACE)
        if not value.startswith(b":"):
            continue
        value = value[1:].lstrip(WHITESPACE)
        if value.startswith(b"["):
            return len(body) - len(value)
    return None


def array_close(body: bytes, start: int, tail_key: str | None) -> tuple[int, dict[str, Any]] | None:
    """Where the array closes (at or after `start`), and the fields after it parsed: before the
    first trailing field (the last occurrence of its name from which the rest parses as the end
    of an object, so a key of the top level), else before the closing `}`."""
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
        if at < 0 or len(body) - at > MAX_TAIL_BYTES:
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


def item_ends(body: bytes, start: int, stop: int) -> list[int]:
    """Where each object or array of `body[start:stop]` (items of a valid JSON array, with their
    commas) ends, by skipping strings and counting brackets. Exact only on valid JSON: call it
    on bytes that have just parsed."""
    depth = 0
    ends: list[int] = []
    for match in _TOKENS.finditer(body, start, stop):
        first = body[match.start()]
        if first == 0x22:  # a string
            continue
        if first in _OPENERS:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                ends.append(match.end())
    return ends


def compact_ends(body: bytes, start: int, items: list[Any]) -> list[int] | None:
    """Where each of `items` ends when `body[start:]` is a comma then their compact encodings
    (orjson's) joined by bare commas, else None (tokenise then). Exact: an item's bytes start
    right after a comma that ends the one before, and a complete encoding read from an item's
    start ends where the item does (the same bytes tokenise the same way), so an item whose
    bytes begin with its own encoding ends there. One `orjson.dumps` per item, no tokenising."""
    at = start
    while at < len(body) and body[at] in WHITESPACE:
        at += 1
    ends: list[int] = []
    for item in items:
        if body[at : at + 1] != b",":
            return None
        encoded = orjson.dumps(item)
        if not body.startswith(encoded, at + 1):
            return None
        at += 1 + len(encoded)
        ends.append(at)
    return ends


def chain_ends(body: bytes, end: int, items: list[Any], floor: int, limit: int) -> list[int]:
    """Where the items before the last one end (ascending, at most `limit`), when the bytes
    before `end` (the true end of `items[-1]`) are their compact encodings (orjson's, which is
    JS `JSON.stringify`'s and httpx's) joined by bare commas; the chain stops at the first that
    is not. No tokenising: one `orjson.dumps` and one comparison per item.

    Why a match is the item's true start: an encoding `D` that ends where the item's own
    encoding `X` ends and equals it in value is a suffix of `X`; if it started later, its `{`
    would be inside one of X's strings (a structural one would open an object closing before
    X's end), so its next byte `"` would close that string and the first byte of its first key
    would have to be one that may follow a string. Keys that start otherwise make `D` == `X`."""
    ends: list[int] = []
    at = end
    for item in reversed(items[max(1, len(items) - limit) :]):  # an item's start ends the one before
        encoded = orjson.dumps(item)
        start = at - len(encoded)
        if start - 2 <= floor or len(encoded) < 3 or not encoded.startswith(b'{"'):
            break
        if encoded[2] in _AFTER_STRING or body[start - 1] != 0x2C or body[start - 2] != 0x7D:  # "," "}"
            break
        if body[start:at] != encoded:
            break
        at = start - 1
        ends.append(at)
    ends.reverse()
    return ends


def shared_end(body: bytes, prefix: bytes, ends: list[int]) -> int:
    """The index of the last of `ends` (ascending offsets in `prefix`) up to which `body` equals
    `prefix`, or -1. Binary search; each probe compares only the bytes not yet known equal
    (`startswith` at an offset with a memoryview of `prefix`: a memcmp without a copy; not a
    memoryview comparison, which is per byte). `prefix` may run on past the last end."""
    view = memoryview(prefix)
    if body.startswith(view[: ends[-1]]):
        return len(ends) - 1
    low, high = -1, len(ends) - 1  # ends[low] shared (-1: none), ends[high] not
    same = 0  # bytes known equal
    while high - low > 1:
        middle = (low + high) // 2
        boundary = ends[middle]
        window = max(same, boundary - PROBE_WINDOW)
        if body[window:boundary] == prefix[window:boundary] and body.startswith(view[same:boundary], same):
            low, same = middle, boundary
        else:
            high = middle
    return low
