"""Which of a request's messages the privacy scan has read already: those equal to what it read.

The scan is incremental: a step reads only the messages no earlier step of its trajectory read.
Counting them is not enough. A client that edits a message it sent before (a chat UI's edit
and resend, a regenerated last turn, a harness rewriting a tool result, a history compacted to
as many messages) sends as many messages as before, or more, with new text among those already
counted; read by count, that text went to the cloud unscanned, its values unredacted.

So what was read is known by content. In this process: the last list of messages scanned per
trajectory, compared with the new one by identity, then by content (one list comparison, C
speed); the scan starts at the first message that differs. For another replica, or after a
restart, the trajectory's `vault:scanned` note holds the count and a digest chained over those
messages (`N:digest`): a step with nothing to compare recomputes the digest of its first N
messages once (~1 ms at 400 KB) and reads from the start when it differs. A digest is of a
message's JSON less its `cache_control` markers, which clients move onto their newest messages
at every step (a marker, nothing the scan looks for); a note without a digest (written before)
is not trusted.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

_DIGEST = 16  # bytes of sha256 kept per link of the chain
_MARKER = "cache_control"


def equal_prefix(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> int:
    """How many first messages of `new` equal those of `old` (identity first, then content)."""
    count = min(len(old), len(new))
    if old[:count] == new[:count]:  # C speed: `is` for each message first, `==` only when not
        return count
    for index in range(count):
        before, now = old[index], new[index]
        if before is not now and before != now:
            return index
    return count


def _unmarked(message: dict[str, Any]) -> dict[str, Any]:
    """The message without its `cache_control` markers (on it or on its content parts)."""
    content = message.get("content")
    marked_parts = isinstance(content, list) and any(isinstance(p, dict) and _MARKER in p for p in content)
    if _MARKER not in message and not marked_parts:
        return message
    out = {key: value for key, value in message.items() if key != _MARKER}
    if marked_parts:
        assert isinstance(content, list)
        out["content"] = [
            {k: v for k, v in part.items() if k != _MARKER} if isinstance(part, dict) else part for part in content
        ]
    return out


def _link(previous: bytes, message: dict[str, Any]) -> bytes:
    try:
        encoded = orjson.dumps(_unmarked(message))
    except (TypeError, orjson.JSONEncodeError):
        # Nothing to compare it by: a link no other chain holds, so it is read again.
        encoded = repr(id(message)).encode() + hashlib.sha256(repr(message).encode("utf-8", "replace")).digest()
    return hashlib.sha256(previous + encoded).digest()[:_DIGEST]


def chain(messages: list[dict[str, Any]], start: list[bytes] | None = None) -> list[bytes]:
    """The digest after each message, continuing `start` (the digests of the messages before)."""
    links = list(start or ())
    previous = links[-1] if links else b""
    for message in messages[len(links) :]:
        previous = _link(previous, message)
        links.append(previous)
    return links


def parse_note(note: str | None) -> tuple[int, bytes] | None:
    """`N:digest` -> (N, digest); None for a missing, old (`N` alone) or broken note."""
    if not note:
        return None
    count, _, digest = note.partition(":")
    if not count.isdigit() or not digest:
        return None
    try:
        return int(count), bytes.fromhex(digest)
    except ValueError:
        return None


@dataclass(slots=True)
class _Read:
    messages: list[dict[str, Any]]  # the list last scanned (a copy of the list, same objects)
    links: list[bytes]  # chain(messages)
    chars: int  # a rough size, for the bound


class ScannedMessages:
    """Per trajectory, the messages this process scanned last; bounded in count and in size
    (their objects are mostly the ones the request parser or the privacy memo hold anyway)."""

    def __init__(self, max_trajectories: int = 1024, max_chars: int = 32 * 1024 * 1024) -> None:
        self._reads: OrderedDict[str, _Read] = OrderedDict()
        self._max = max_trajectories
        self._max_chars = max_chars
        self._chars = 0
        # The comparison `first_unread` made last (trajectory, the read compared, the messages):
        # `read` of the same step reuses it instead of comparing the whole history again (a
        # body parsed afresh holds new objects, so the comparison is by content).
        self._compared: tuple[str, _Read, list[dict[str, Any]]] | None = None

    def first_unread(self, trajectory_id: str, messages: list[dict[str, Any]], note: str | None) -> int:
        """How many first messages of `messages` a scan of this trajectory (as its note says)
        read exactly as they are now: the scan starts there."""
        said = parse_note(note)
        if said is None or said[0] == 0 or said[0] > len(messages):
            return 0
        count, digest = said
        read = self._reads.get(trajectory_id)
        if read is not None and count <= len(read.links) and read.links[count - 1] == digest:
            # This process read what the note describes: the messages still equal to those.
            self._compared = (trajectory_id, read, messages)
            return min(count, equal_prefix(read.messages, messages))
        return count if chain(messages[:count])[-1] == digest else 0

    def read(self, trajectory_id: str, messages: list[dict[str, Any]], unchanged: int, chars: int) -> str:
        """Remember that `messages` were read (the first `unchanged` as they were before); the
        note that says so to other replicas."""
        if not messages:
            self.forget(trajectory_id)
            return "0"
        old = self._reads.pop(trajectory_id, None)
        start: list[bytes] | None = None
        if old is not None:
            self._chars -= old.chars
            compared = self._compared
            if compared is not None and compared[0] == trajectory_id and compared[1] is old and compared[2] is messages:
                same = unchanged  # first_unread's answer: at most the equal prefix it found
            else:
                same = min(unchanged, equal_prefix(old.messages, messages))
            start = old.links[:same]
        self._compared = None
        links = chain(messages, start)
        size = (old.chars if old is not None else 0) + chars + 64 * len(messages)
        if size <= self._max_chars // 4:  # one trajectory never takes more than a quarter
            self._reads[trajectory_id] = _Read(list(messages), links, size)
            self._chars += size
            while len(self._reads) > self._max or self._chars > self._max_chars:
                _, dropped = self._reads.popitem(last=False)
                self._chars -= dropped.chars
        return f"{len(messages)}:{links[-1].hex()}"

    def forget(self, trajectory_id: str) -> None:
        old = self._reads.pop(trajectory_id, None)
        if old is not None:
            self._chars -= old.chars
