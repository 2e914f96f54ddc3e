"""What the stream relay reads of an upstream's server-sent events beside relaying their bytes:
the usage chunk, the tools called, whether the answer finished, and (only when asked) the
answer's text or its stitching key; and the upstream's end marker, found however its reads split it.

Memory a stream holds here stays small whatever the answer's length: one incomplete event (at most
`limits.max_sse_line_bytes`), and the answer's text only when something needs it whole (the
content audit, a judge row or a shadow call); the stitching key of a session-less step is a hash
kept up to date as the text goes by, not the text.
"""

from __future__ import annotations

from typing import Any

import orjson

from router.protocol.upstream_error import event_error
from router.protocol.usage import Usage
from router.trajectory.identify import CHOICES_SEPARATOR, AnswerKeyer, Call

# Captured text is joined every so many pieces: a str a delta (a token or two) costs ~50 bytes
# beside its text, more than the text itself.
TEXT_PIECES = 256


class EventTooLong(Exception):
    """An upstream event (its data line) grew past `limits.max_sse_line_bytes`."""


class EventNotJson(Exception):
    """An upstream event whose data is not JSON (a broken server, a proxy's page cut in)."""


def _check_events(complete: bytes) -> None:
    """Raise `EventNotJson` for the first event of `complete` (whole events) whose data, its
    `data:` lines joined as the SSE format joins them, is not JSON."""
    for event in complete.split(b"\n\n"):
        lines = [line[5:] for line in event.split(b"\n") if line.startswith(b"data:")]
        if not lines:
            continue
        payload = b"\n".join(line[1:] if line[:1] == b" " else line for line in lines)
        if payload == b"[DONE]":
            continue
        try:
            orjson.loads(payload)
        except orjson.JSONDecodeError:
            raise EventNotJson(payload[:120].decode("utf-8", "replace")) from None


class Observer:
    """Finds the usage chunk, the tools called and the end of a stream without parsing every
    event (unless `capture` asks for the answer's text, or `keyed` for its stitching key).

    The incomplete event waits in one bytearray that grows by each chunk, and only the newly
    arrived bytes are searched for its end: a stream that never ends an event costs time in
    proportion to its length (joining the wait to every chunk cost its square), and it stops
    at `max_event_bytes`. A chunk of whole events (nearly all of them) is read where it is."""

    __slots__ = (
        "_calls",
        "_capture",
        "_keep_calls",
        "_keyer",
        "_max_event_bytes",
        "_others",
        "_pending",
        "_recent",
        "error",
        "events",
        "finished",
        "text",
        "tools",
        "usage",
    )

    def __init__(
        self, capture: bool = False, max_event_bytes: int = 8 * 1024 * 1024, keyed: bool = False, calls: bool = False
    ) -> None:
        self._capture = capture
        self._keyer = AnswerKeyer() if keyed else None
        # Whether the tool calls are kept whole (ids, arguments): for the key, or `calls`
        # (a sub-agent's start is read from them: router/trajectory/children.py).
        self._keep_calls = keyed or calls
        # The tool calls by index, as their deltas add up ([id, name, argument pieces]): only
        # when keyed (the answer's identity reads their ids and arguments).
        self._calls: dict[int, list[Any]] = {}
        # With `n` > 1, the other choices' keyers and calls, by choice index: the client goes on
        # with any one, so each is keyed apart (`answer_key`); the captured text is the first's.
        self._others: dict[int, tuple[AnswerKeyer, dict[int, list[Any]]]] = {}
        self._max_event_bytes = max_event_bytes
        self._pending = bytearray()
        self.usage: Usage | None = None
        self.finished = False
        # The message of an error event the upstream sent in place of a chunk (OpenAI, vLLM and
        # others end a failed generation so): the stream failed, though it may end with [DONE].
        self.error: str | None = None
        self.events = 0
        self.tools: list[str] = []
        self.text: list[str] = []  # the captured text, in joined pieces (`captured`)
        self._recent: list[str] = []

    @property
    def partial(self) -> bool:
        """Whether part of an event is waiting for its end."""
        return bool(self._pending)

    def captured(self) -> str:
        """The answer's text (when `capture` was asked for; else "")."""
        return "".join(self.text) + "".join(self._recent)

    def answer_key(self) -> str | None:
        """The stitching key of the answer's text and tool calls (when `keyed` was asked for);
        with `n` > 1, every choice's, the first choice's first (`identify.CHOICES_SEPARATOR`)."""
        if self._keyer is None:
            return None
        calls = self.calls()
        key = CHOICES_SEPARATOR.join([self._keyer.key(calls), *self._keyer.other_keys(calls)])
        if not self._others:
            return key
        others = (keyer.key(_whole(calls)) for _, (keyer, calls) in sorted(self._others.items()))
        return CHOICES_SEPARATOR.join((key, *others))

    def calls(self) -> list[Call]:
        """The first choice's tool calls whole (when `keyed` or `calls` was asked for; else none)."""
        return _whole(self._calls)

    def feed(self, chunk: bytes) -> None:
        pending = self._pending
        if not pending and chunk.endswith(b"\n\n") and b"\r" not in chunk:
            self._read(chunk)  # whole events: nothing to wait for, nothing to copy
            return
        # From the last byte already held: a \r\n or an event's end may straddle two chunks.
        start = max(len(pending) - 1, 0)
        pending += chunk
        if b"\r" in chunk or pending[start : start + 1] == b"\r":
            pending[start:] = pending[start:].replace(b"\r\n", b"\n")
        end = pending.rfind(b"\n\n", max(start - 1, 0))
        if end < 0:
            if len(pending) > self._max_event_bytes:
                raise EventTooLong(len(pending))
            return
        complete = bytes(pending[: end + 2])
        del pending[: end + 2]
        if len(pending) > self._max_event_bytes:
            raise EventTooLong(len(pending))
        if not pending:
            # A bytearray keeps the room it once grew to: a long event's would stay held.
            self._pending = bytearray()
        self._read(complete)

    def _read(self, complete: bytes) -> None:
        data_lines = complete.count(b"data:")
        self.events += data_lines
        # Each event's data is one JSON object, ending its line with `}`: counted, not parsed
        # (a raw line break cannot be inside a JSON string). Where the counts differ (`data:`
        # inside a text, an event of several data lines, a broken one), the events are read.
        if data_lines != complete.count(b"}\n"):
            _check_events(complete)
        if b'"finish_reason":"' in complete or b'"finish_reason": "' in complete:
            self.finished = True
        if (
            self._capture
            or self._keyer is not None
            or b'"usage"' in complete
            or b'"name"' in complete
            or b'"error"' in complete  # only a key: a quote inside a JSON string is escaped
            or (self._keep_calls and b'"tool_calls"' in complete)
        ):
            self._parse(complete)

    def _parse(self, complete: bytes) -> None:
        for line in complete.split(b"\n"):
            if not line.startswith(b"data:") or line.startswith(b"data: [DONE]"):
                continue
            try:
                event = orjson.loads(line[5:])
            except orjson.JSONDecodeError:
                continue
            if not isinstance(event, dict):
                continue
            if self.error is None:
                error = event_error(event)
                if error is not None:
                    self.error = error["message"][:500]
            usage = Usage.from_openai(event.get("usage"))
            if usage is not None:
                self.usage = usage
            choices = event.get("choices")
            for choice in choices if isinstance(choices, list) else ():
                if isinstance(choice, dict):
                    index = choice.get("index")
                    if index and isinstance(index, int):
                        self._read_other(choice.get("delta"), index)
                    else:
                        self._read_delta(choice.get("delta"), self._keyer, self._calls)

    def _read_other(self, delta: Any, index: int) -> None:
        """A delta of a choice after the first (`n` > 1), keyed apart from it."""
        other = self._others.get(index)
        if other is None:
            other = self._others[index] = (AnswerKeyer(), {})
        self._read_delta(delta, other[0], other[1], first=False)

    def _read_delta(
        self, delta: Any, keyer: AnswerKeyer | None, kept_calls: dict[int, list[Any]], first: bool = True
    ) -> None:
        if not isinstance(delta, dict):
            return
        if isinstance(delta.get("content"), str):
            if keyer is not None:
                keyer.add(delta["content"])
            if first:
                self._take(delta["content"])
        calls = delta.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            function = call.get("function") if isinstance(call, dict) else None
            kept = _call(kept_calls, call) if self._keep_calls and isinstance(call, dict) else None
            if isinstance(function, dict):
                if isinstance(function.get("name"), str):
                    self.tools.append(function["name"])
                    if kept is not None:
                        kept[1] = (kept[1] or "") + function["name"]
                if isinstance(function.get("arguments"), str):
                    if kept is not None:
                        kept[2].append(function["arguments"])
                    if first:
                        self._take(function["arguments"])

    def _take(self, piece: str) -> None:
        if self._capture:
            recent = self._recent
            recent.append(piece)
            if len(recent) >= TEXT_PIECES:
                self.text.append("".join(recent))
                recent.clear()


def _call(kept_calls: dict[int, list[Any]], call: dict[str, Any]) -> list[Any]:
    """The call a delta adds to (by its index), its id taken from the first delta with one."""
    index = call.get("index")
    kept = kept_calls.setdefault(index if isinstance(index, int) else -1, [None, None, []])
    if isinstance(call.get("id"), str) and call["id"] and kept[0] is None:
        kept[0] = call["id"]
    return kept


def _whole(kept_calls: dict[int, list[Any]]) -> list[Call]:
    return [(c[0], c[1], "".join(c[2])) for c in kept_calls.values()]


class EndMarker:
    """Finds the upstream's end marker (a `data: [DONE]` line) however its reads split it, so
    that it is never passed on: the relay sends its own, once, after the usage chunk. The bytes
    of a line that may still become the marker are held back until a later read tells; the text
    `[DONE]` inside an event's JSON (an answer quoting it) is no marker, as it is not a line."""

    __slots__ = ("_held", "_line_start", "done")

    MARKERS = (b"data: [DONE]", b"data:[DONE]")

    def __init__(self) -> None:
        self._held = b""
        self._line_start = True  # the next byte starts a line
        self.done = False

    def feed(self, chunk: bytes) -> bytes:
        """What of the stream may go out now: all but a held line, and nothing from the marker on."""
        data = self._held + chunk if self._held else chunk
        at_line_start = self._line_start or bool(self._held)  # a held line starts a line
        self._held = b""
        if b"[DONE]" in data:
            end = self._marker_at(data, at_line_start)
            if end >= 0:
                self.done = True
                return data[:end]
        # The last line, if it may be the start of the marker (at most its 12 bytes).
        size = len(data)
        floor = max(size - len(self.MARKERS[0]), 0)
        start = max(data.rfind(b"\n", floor), data.rfind(b"\r", floor)) + 1
        if start == 0 and not (at_line_start and size <= len(self.MARKERS[0])):
            self._line_start = False
            return data
        line = data[start:]
        if line and any(marker.startswith(line) for marker in self.MARKERS):
            self._held = line
            return data[:start]
        self._line_start = not line
        return data

    @classmethod
    def _marker_at(cls, data: bytes, at_line_start: bool) -> int:
        found = -1
        for marker in cls.MARKERS:
            index = data.find(marker)
            while index >= 0:
                if (index == 0 and at_line_start) or data[index - 1 : index] in (b"\n", b"\r"):
                    found = index if found < 0 else min(found, index)
                    break
                index = data.find(marker, index + 1)
        return found
