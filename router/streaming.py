"""Relay of an upstream's server-sent events to the client, chunk by chunk as they arrive.

The bytes go out as the upstream sent them; beside them, a light observer splits events only
to find the usage chunk and what the record needs (router/stream_events.py), and the upstream's
end marker is held back. The stream always ends with a usage chunk and
`data: [DONE]`; a failure mid-stream ends it with an error event, never a silent cut.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from router.errors import error_body
from router.protocol.chat import chunk_event
from router.protocol.usage import Usage
from router.stream_events import EndMarker, EventNotJson, EventTooLong, Observer
from router.stream_source import StreamDeadline, StreamSource
from router.trajectory.identify import Call
from router.transport import TransportError

if TYPE_CHECKING:
    from router.privacy.redact import StreamRestorer

DONE_EVENT = b"data: [DONE]\n\n"
log = logging.getLogger("tandem")


@dataclass(slots=True)
class StreamOutcome:
    usage: Usage | None = None
    tools: list[str] = field(default_factory=list)  # tool names the answer called
    text: str = ""  # the answer's text, only when capture was asked for (audit, judge row, shadow)
    answer_key: str | None = None  # the answer's stitching key, only when asked for (`keyed`)
    calls: list[Call] = field(default_factory=list)  # the tool calls whole, when asked for (`calls`)
    completed: bool = False  # the upstream's [DONE] (or a finish_reason and a clean end) was seen
    error: str | None = None  # why the stream was ended with an error event
    # How the upstream failed, where it did (`UpstreamFailure.kind`'s words: `disconnected`,
    # `timeout`, `status`, `invalid_answer`); None when it did not (the client left, the gateway
    # stopped, or the answer was whole).
    failure: str | None = None
    cancelled: bool = False  # the client went away
    events: int = 0
    duration_s: float = 0.0


# What a step still waiting for its answer when the gateway stops is answered and recorded with.
STEP_SHUT_DOWN = "the gateway is shutting down: the step was ended before its answer"


class OpenStreams:
    """The streams being relayed, so that a stopping gateway can end them itself, each with an
    error event, `[DONE]` and its record, before its server's shutdown timeout cuts them; and
    the steps still waiting for their answer (router/api/disconnect.py), ended at the same time
    with a 503 and their record rather than cancelled by the server with a bare 500."""

    __slots__ = ("_ends_at", "_sources", "ended", "steps")

    def __init__(self) -> None:
        self._sources: set[StreamSource] = set()
        self._ends_at: float | None = None  # loop time by which every stream ends, once stopping
        # The steps waiting for their answer: each callable ends its step. A plain set and flag
        # that the watch (router/api/disconnect.py) adds to and reads, so that every request's
        # walk does not call into this module twice.
        self.steps: set[Callable[[], None]] = set()
        self.ended = False  # the waiting steps were ended: any step from now on ends at once

    def __len__(self) -> int:
        return len(self._sources)

    def _end_steps(self) -> None:
        self.ended = True
        for end in list(self.steps):
            end()

    def add(self, source: StreamSource) -> None:
        self._sources.add(source)
        if self._ends_at is not None:
            source.end_by(self._ends_at, "shutdown")

    def discard(self, source: StreamSource) -> None:
        self._sources.discard(source)

    def end_all(self, within_s: float) -> int:
        """End every stream (and any that starts from now on) within `within_s` seconds; the
        number still running."""
        loop = asyncio.get_running_loop()
        at = loop.time() + within_s
        if self._ends_at is None or at < self._ends_at:
            self._ends_at = at
            loop.call_at(at, self._end_steps)
        for source in self._sources:
            source.end_by(self._ends_at, "shutdown")
        return len(self._sources) + len(self.steps)


class _Whole:
    """What of the relayed bytes may go out now: up to the end of the last whole event. The
    rest waits for its event's end, so that an upstream that breaks off inside an event leaves
    the client no half event (which the gateway's error event would have ended, and an SDK then
    failed to parse as JSON) but the error event alone."""

    def __init__(self) -> None:
        self.held = bytearray()  # after the last event's end: no event's end inside it

    def feed(self, data: bytes) -> bytes:
        if not self.held and data.endswith(_EVENT_ENDS):
            return data  # as upstreams mostly send them: whole events, passed on without a copy
        # An end is looked for in the new bytes only (an event sent in many pieces is not
        # searched again for each), and across the seam with what is held.
        cut = _last_end(data)
        if not cut and self.held:
            tail = bytes(self.held[-3:])
            cut = max(_last_end(tail + data[:3]) - len(tail), 0)
        if not cut:
            self.held += data
            return b""
        out = bytes(self.held) + data[:cut] if self.held else data[:cut]
        self.held = bytearray(data[cut:])
        return out

    def flush(self) -> bytes:
        data = bytes(self.held)
        self.held = bytearray()
        return data


# The ends of an event (a blank line, with any of SSE's three line ends).
_EVENT_ENDS = (b"\n\n", b"\r\n\r\n", b"\r\r")


def _last_end(data: bytes) -> int:
    """Where the last event's end in `data` ends (0: none)."""
    cut = 0
    for end in _EVENT_ENDS:
        at = data.rfind(end)
        if at >= 0 and at + len(end) > cut:
            cut = at + len(end)
    return cut


def _broken_off(
    exc: BaseException, upstream: str, source: StreamSource, max_event_bytes: int
) -> tuple[str, str, str | None]:
    """Why a stream under way was ended: the record's error, the error event's code, and how the
    upstream failed (`StreamOutcome.failure`; None where it did not: the gateway stopping)."""
    if isinstance(exc, EventTooLong):
        source.on_limit("max_sse_line_bytes")
        error = (
            f"the {upstream} upstream sent an event of {exc.args[0]} bytes or more without its end, over the "
            f"limit of {max_event_bytes} bytes (limits.max_sse_line_bytes)"
        )
        return error, "upstream_event_too_long", "invalid_answer"
    if isinstance(exc, EventNotJson):
        return (
            f"the {upstream} upstream sent an event that is not JSON: {exc.args[0]!r}",
            "upstream_invalid_event",
            "invalid_answer",
        )
    if isinstance(exc, StreamDeadline) and exc.reason == "shutdown":
        log.warning(
            "a stream of the %s upstream still running at the shutdown timeout was ended with an error event", upstream
        )
        error = "the gateway is shutting down: the stream was ended before the upstream finished it"
        return error, "gateway_shutting_down", None
    if isinstance(exc, StreamDeadline):
        error = (
            f"the {upstream} upstream's stream passed its deadline of {source.stream_timeout_s:g} s "
            f"(upstreams.{upstream}.timeouts.stream)"
        )
        return error, "upstream_stream_timeout", "timeout"
    if isinstance(exc, TimeoutError):
        return (
            f"the {upstream} upstream sent nothing for {source.idle_timeout_s:g} s",
            "upstream_idle_timeout",
            "timeout",
        )
    return f"the {upstream} upstream failed mid-stream: {exc}", "upstream_stream_failed", "disconnected"


def _error_event(message: str, code: str) -> bytes:
    # An event of its own: what went out before it ends at an event's end (_Whole).
    return b"data: " + error_body(message, "upstream_error", code) + b"\n\n"


def _usage_event(usage: Usage, model: str) -> bytes:
    return chunk_event("chatcmpl-tandem-usage", model, int(time.time()), [], usage=usage.to_openai())


async def relay(
    source: StreamSource,
    *,
    upstream: str,
    model: str,
    prompt_bytes: int,
    on_end: Callable[[StreamOutcome], None],
    capture: bool = False,
    keyed: bool = False,
    calls: bool = False,
    restorer: StreamRestorer | None = None,
    streams: OpenStreams | None = None,
    kept: Callable[[], Awaitable[None]] | None = None,
) -> AsyncGenerator[bytes, None]:
    """Yield the upstream's bytes; `on_end` is called exactly once, however the stream ends:
    before the final `[DONE]` when the relay reaches it (then `kept` is awaited too, so that the
    step's record is where it must be before the client has its whole answer: on disk during a
    store outage), else when the client leaves. `streams`: where the stream is known while it
    runs (a stopping gateway ends those)."""
    limits = source.limits
    if streams is not None:
        streams.add(source)
    # The answer's stitching key is of what the client gets: behind a restorer (a redacting
    # cloud route), of the restored events, which the client resends; else of the upstream's.
    restored = Observer(False, limits.max_sse_line_bytes, True) if keyed and restorer is not None else None
    observer = Observer(capture, limits.max_sse_line_bytes, keyed and restored is None, calls)
    outcome = StreamOutcome()
    started = time.perf_counter()
    marker = EndMarker()
    whole = _Whole()
    chunk = source.first_chunk
    received = 0
    ended = False

    def end() -> None:
        """Fill the outcome in and hand it to `on_end`, once."""
        nonlocal ended
        if ended:
            return
        ended = True
        if streams is not None:
            streams.discard(source)
        if (outcome.cancelled or outcome.error is not None) and observer.usage is None:
            # The client left, or the upstream broke off, before the usage chunk: the prompt was
            # read and some tokens made all the same. Charge an estimate, marked as such.
            observer.usage = Usage(prompt_bytes // 4, 0, max(observer.events - 1, 0), source="estimated")
        outcome.usage = observer.usage
        outcome.tools = observer.tools
        outcome.text = observer.captured()
        outcome.answer_key = (restored or observer).answer_key()
        outcome.calls = observer.calls()
        outcome.events = observer.events
        outcome.duration_s = time.perf_counter() - started
        on_end(outcome)

    async def ended_and_kept() -> None:
        # The step's record is made, and kept, before `[DONE]` goes out: a gateway killed the
        # moment after the client has its whole answer has the record already (on disk during
        # a store outage, with the journal), not a few milliseconds later.
        end()
        if kept is not None:
            try:
                await kept()
            except Exception:  # the answer still ends properly; the record is in memory
                log.exception("could not wait for a streamed step's record to be kept")

    try:
        while chunk:
            received += len(chunk)
            if received > limits.max_answer_bytes:
                source.on_limit("max_answer_bytes")
                outcome.error = (
                    f"the {upstream} upstream's answer passed the limit of {limits.max_answer_bytes} bytes "
                    "(limits.max_answer_bytes)"
                )
                outcome.failure = "invalid_answer"
                yield _error_event(outcome.error, "answer_too_large")
                await ended_and_kept()
                yield DONE_EVENT
                return
            out = marker.feed(chunk)
            if out:
                observer.feed(out)
                if restorer is not None:
                    out = restorer.feed(out)
                    if restored is not None:
                        restored.feed(out)
            if marker.done:
                # The end marker is held back until a usage chunk went out before it.
                observer.events += 1  # it is an event all the same (the usage estimate counts it)
                if restorer is not None:
                    tail = restorer.flush()
                    if restored is not None:
                        restored.feed(tail)
                    out += tail
                if observer.partial:
                    # The marker was a line of an event still open: end that event here, so
                    # that what follows is an event of its own.
                    out += b"\n"
                    observer.feed(b"\n")
                    if restored is not None:
                        restored.feed(b"\n")
                out = whole.flush() + out
                if out:
                    yield out
                break
            out = whole.feed(out)
            if out:
                yield out
            if observer.error is not None:
                # The upstream reported an error in place of its answer: relayed as it came, it
                # ends the stream (whatever may follow it is no answer).
                break
            chunk = await source.chunks()
        if restorer is not None and not marker.done:
            tail = restorer.flush()
            if restored is not None:
                restored.feed(tail)
            tail = whole.feed(tail)
            if tail:
                yield tail
        if observer.error is not None:
            outcome.error = f"the {upstream} upstream sent an error event in its stream: {observer.error}"
            outcome.failure = "status"
            held = whole.flush()
            if held or observer.partial:
                yield held + b"\n\n"  # the error event's own end, where the upstream did not send it
        elif not marker.done and not observer.finished:
            outcome.error = f"the {upstream} upstream closed the stream before it was complete"
            outcome.failure = "disconnected"
            whole.flush()  # a half event is not sent: the error event stands alone
            yield _error_event(outcome.error, "upstream_stream_incomplete")
        elif observer.usage is None:
            # No usage from the upstream: estimate it (about 4 bytes a prompt token, one
            # token an event) so that clients never see zero tokens, and mark it estimated.
            observer.usage = Usage(prompt_bytes // 4, 0, max(observer.events - 1, 0), source="estimated")
            yield _usage_event(observer.usage, model)
        outcome.completed = outcome.error is None
        await ended_and_kept()
        yield DONE_EVENT
    except (EventTooLong, EventNotJson, StreamDeadline, TimeoutError, TransportError) as exc:
        outcome.error, code, outcome.failure = _broken_off(exc, upstream, source, limits.max_sse_line_bytes)
        yield _error_event(outcome.error, code)
        await ended_and_kept()
        yield DONE_EVENT
    except BaseException:
        # GeneratorExit or cancellation: the client disconnected; the upstream is closed below.
        outcome.cancelled = True
        raise
    finally:
        source.close()
        end()
