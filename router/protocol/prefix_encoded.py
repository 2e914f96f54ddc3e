"""The chat messages' encoding a parsed body keeps (router/protocol/prefix_store.py), and the
request's bytes made with it: a step encodes its new messages only, and joins the rest once,
into the bytes the upstream is sent."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

from router.protocol.fields import check_depth

MAX_CHUNKS = 64  # pieces the chat messages' encoding is kept in


@dataclass(frozen=True, slots=True)
class Encoded:
    """Chat messages' encodings, each followed by a comma, as the chunks the steps made (not
    joined: the request's bytes are the one copy of the history a step makes)."""

    chunks: tuple[bytes | memoryview, ...] = ()
    ends: tuple[int, ...] = ()  # where each chunk ends

    @property
    def size(self) -> int:
        return self.ends[-1] if self.ends else 0

    def upto(self, size: int) -> Encoded:
        """The first `size` bytes."""
        if size == self.size:
            return self
        index = bisect.bisect_left(self.ends, size)
        start = self.ends[index - 1] if index else 0
        chunks, ends = self.chunks[:index], self.ends[:index]
        if size > start:
            chunks, ends = (*chunks, memoryview(self.chunks[index])[: size - start]), (*ends, size)
        return Encoded(chunks, ends)

    def plus(self, chunk: bytes) -> Encoded:
        if not chunk:
            return self
        if len(self.chunks) >= MAX_CHUNKS:  # one copy every MAX_CHUNKS steps keeps `array` short
            whole = b"".join((*self.chunks, chunk))
            return Encoded((whole,), (len(whole),))
        return Encoded((*self.chunks, chunk), (*self.ends, self.size + len(chunk)))

    def array(self, skip: int = 0) -> list[bytes | memoryview]:
        """The pieces of the JSON array of the messages after the first `skip` bytes (without
        its brackets, nor the last comma); empty when there are none."""
        if skip >= self.size:
            return []
        index = bisect.bisect_right(self.ends, skip)
        start = self.ends[index - 1] if index else 0
        pieces: list[bytes | memoryview] = list(self.chunks[index:])
        if skip > start:
            pieces[0] = memoryview(pieces[0])[skip - start :]
        pieces[-1] = memoryview(pieces[-1])[:-1]
        return pieces


def messages_array(encoded: Encoded) -> list[bytes | memoryview]:
    """The JSON array of the chat messages `encoded`, as pieces to join."""
    return [b"[", *encoded.array(), b"]"]


def serialised_with(
    raw: dict[str, Any], key: str, array: list[bytes | memoryview], max_depth: int
) -> tuple[bytes, tuple[int, int]]:
    """The bytes `chat_request` makes for `raw` (model first, then the client's order: a retry
    is known by them), with the encoding of `raw[key]` (`array`) reused instead of made again;
    the other fields are checked for depth as that does. And where `array` lies in them, so that
    an upstream's edits (dropped fields) need not encode it again (`ChatRequest.upstream_body`)."""
    keys = list(raw)
    at = keys.index(key)
    parts: list[bytes | memoryview] = [b'{"model":', check_depth(raw["model"], max_depth)]
    before = {name: raw[name] for name in keys[:at] if name != "model"}
    if before:
        parts += [b",", check_depth(before, max_depth)[1:-1]]
    parts += [b",", check_depth(key, max_depth), b":"]
    start = sum(len(part) for part in parts)
    parts += array
    end = sum(len(part) for part in parts)
    after = {name: raw[name] for name in keys[at + 1 :] if name != "model"}
    if after:
        parts += [b",", check_depth(after, max_depth)[1:-1]]
    parts.append(b"}")
    return b"".join(parts), (start, end)
