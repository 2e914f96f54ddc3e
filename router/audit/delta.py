"""Content lines as deltas: each cloud line carries only the messages the trajectory's previous
cloud line did not, so the audit of a run grows with the run, not with its square.

A content line has an `audit_id`. When the messages the cloud received start with the whole
input of the trajectory's previous line, the line holds `input_ref` (that line's `audit_id`),
`input_from` (how many messages it had) and `input_delta` (the messages after them); otherwise
it holds the whole `input`. Every file opens, after a rotation, with a snapshot line per open
trajectory (`"audit": "snapshot"`, its last `input` in full), and the lines after it refer to
the snapshot: no line points outside its own file. `tandem audit expand` puts them back together.

Runs in the writer thread: the comparison stays off the event loop (the messages come
serialised, by `AuditLog.submit`, so that its queue holds and counts their bytes). What
is remembered per trajectory is the JSON of each message of its last input, bounded in bytes
(least recently written trajectory forgotten first: its next line is written in full) and
forgotten once the trajectory is idle.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

from router.protocol.fields import kept_json

SNAPSHOT = "snapshot"
_PART_OVERHEAD = 64  # a bytes object's own size, roughly: counted against the memory bound


@dataclass(slots=True)
class _Last:
    ref: str  # the audit_id of the line (or snapshot) that holds this input
    parts: list[bytes]  # the JSON of each message
    size: int
    at: float


def _join(head: dict[str, Any] | bytes, key: bytes, parts: list[bytes], extra: dict[str, Any] | None = None) -> bytes:
    """A line: `head` (a JSON object, or its bytes), then `extra`'s fields, then `key`: `parts`."""
    data = orjson.dumps(head) if isinstance(head, dict) else head
    fields = [data[1:-1]]
    if extra:
        fields.append(orjson.dumps(extra)[1:-1])
    fields.append(b'"' + key + b'":[' + b",".join(parts) + b"]")
    return b"{" + b",".join(field for field in fields if field) + b"}\n"


class DeltaEncoder:
    def __init__(self, memory_bytes: int, idle_s: float) -> None:
        # Unique across the processes that may share a file (several workers).
        self._writer = os.urandom(4).hex()
        self._seq = 0
        self._memory_bytes = memory_bytes
        self._idle_s = idle_s
        self._open: OrderedDict[str, _Last] = OrderedDict()
        self._bytes = 0

    def _next_id(self) -> str:
        self._seq += 1
        return f"{self._writer}-{self._seq}"

    @property
    def remembered(self) -> int:
        return len(self._open)

    def encode(self, line: dict[str, Any]) -> bytes:
        """`line` as it is written (a content line's `input` as a delta when it can be)."""
        messages = line.pop("input", None)
        trajectory_id = line.get("trajectory_id")
        if not isinstance(messages, list) or not isinstance(trajectory_id, str):
            if messages is not None:
                line["input"] = messages
            return orjson.dumps(line) + b"\n"
        return self.encode_parts(orjson.dumps(line), trajectory_id, [kept_json(message) for message in messages])

    def encode_parts(self, head: bytes, trajectory_id: str | None, parts: list[bytes] | None) -> bytes:
        """A line already serialised: `head`, the line's JSON object without its input, and
        `parts`, the JSON of each message of its input (None: a line without one). The parts
        are kept as they are (compact copies, not orjson's own output: see `kept_json`)."""
        if parts is None or trajectory_id is None:
            return head + b"\n"
        audit_id = self._next_id()
        extra: dict[str, Any] = {"audit_id": audit_id}
        last = self._forget(trajectory_id)
        if last is not None and len(parts) >= len(last.parts) and parts[: len(last.parts)] == last.parts:
            extra["input_ref"] = last.ref
            extra["input_from"] = len(last.parts)
            data = _join(head, b"input_delta", parts[len(last.parts) :], extra)
            # The parts shared with the last line are the ones kept then.
            held = [*last.parts, *parts[len(last.parts) :]]
        else:
            data = _join(head, b"input", parts, extra)
            held = parts
        size = sum(map(len, held)) + _PART_OVERHEAD * len(held)
        self._remember(trajectory_id, _Last(audit_id, held, size, time.time()))
        return data

    def snapshots(self) -> bytes:
        """A snapshot line per open trajectory, for the top of a fresh file; later lines refer
        to these."""
        self._expire(time.time())
        out: list[bytes] = []
        for trajectory_id, last in self._open.items():
            last.ref = self._next_id()
            head = {"audit": SNAPSHOT, "audit_id": last.ref, "trajectory_id": trajectory_id, "at": last.at}
            out.append(_join(head, b"input", last.parts))
        return b"".join(out)

    def _forget(self, trajectory_id: str) -> _Last | None:
        last = self._open.pop(trajectory_id, None)
        if last is not None:
            self._bytes -= last.size
        return last

    def _remember(self, trajectory_id: str, last: _Last) -> None:
        self._open[trajectory_id] = last
        self._bytes += last.size
        while self._bytes > self._memory_bytes and self._open:
            _, oldest = self._open.popitem(last=False)
            self._bytes -= oldest.size
        self._expire(last.at)

    def _expire(self, now: float) -> None:
        while self._open:
            oldest = next(iter(self._open.values()))
            if oldest.at >= now - self._idle_s:
                return
            self._forget(next(iter(self._open)))
