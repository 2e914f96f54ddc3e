"""An open upstream stream, read chunk by chunk with its two clocks: the idle timeout (each wait
for the upstream's next bytes) and the whole stream's deadline (`timeouts.stream`), which a
stopping gateway may bring forward."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from router.config.limits import LimitSettings
    from router.transport import Response


def bare_cr_lines(first: bytes) -> bool:
    """Whether a stream's first bytes end their first line with a carriage return alone: no line
    feed before it, and a byte other than a line feed after it (one at the end of the chunk may
    begin a CRLF: read as one)."""
    cr = first.find(b"\r")
    if cr < 0 or cr + 1 >= len(first) or first[cr + 1] == 0x0A:
        return False
    lf = first.find(b"\n", 0, cr)
    return lf < 0


class StreamDeadline(Exception):
    """A stream's time is up: its whole deadline passed (`reason` "stream_timeout"), or the
    gateway is stopping and ends it before its server's shutdown timeout would ("shutdown")."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(slots=True, eq=False)  # one a stream, kept in a set while it runs
class StreamSource:
    """An open upstream stream whose first chunk has already arrived."""

    response: Response
    first_chunk: bytes
    idle_timeout_s: float
    # The bounds the relay keeps to (the whole stream, one event), and what counts a cut-off.
    limits: LimitSettings
    on_limit: Callable[[str], None]
    # The whole stream, from its first byte (`timeouts.stream`), however steadily it drips.
    stream_timeout_s: float = math.inf
    # Its lines end in a bare carriage return (SSE allows it; `bare_cr_lines`): each chunk is
    # read with line feeds in its place, so the relay, the usage's reader and the translators,
    # which find events by their line feeds, read it event by event.
    bare_cr: bool = False

    # One timer a stream, not one a chunk (an `asyncio.timeout` per read cost a streamed step
    # ~5% of the gateway's CPU): each read moves the deadline; the timer, when it fires, looks
    # again and sleeps until the deadline if it moved, or cancels the read that is still waiting.
    _deadline: float = field(default=0.0, init=False, repr=False)
    _reader: asyncio.Task[Any] | None = field(default=None, init=False, repr=False)
    _watchdog: asyncio.TimerHandle | None = field(default=None, init=False, repr=False)
    _expired: str = field(default="", init=False, repr=False)  # why the timer cancelled the read
    # When the stream must end (loop time), and why: its own deadline, or a stopping gateway's.
    _ends_at: float = field(default=math.inf, init=False, repr=False)
    _end_reason: str = field(default="stream_timeout", init=False, repr=False)

    def __post_init__(self) -> None:
        self._ends_at = asyncio.get_running_loop().time() + self.stream_timeout_s

    async def chunks(self) -> bytes:
        """The next chunk as it arrives, b"" at the end; raises TimeoutError when the upstream
        sends nothing for `idle_timeout_s` while it is waited for (not while the client reads),
        and StreamDeadline once the stream's time is up."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        if now >= self._ends_at:
            raise StreamDeadline(self._end_reason)
        self._deadline = now + self.idle_timeout_s
        if self._watchdog is None:
            self._watchdog = loop.call_at(min(self._deadline, self._ends_at), self._look)
        reader = self._reader = asyncio.current_task()
        try:
            chunk = await self.response.read_some()
            return chunk.replace(b"\r", b"\n") if self.bare_cr else chunk
        except asyncio.CancelledError:
            expired, self._expired = self._expired, ""
            if expired and reader is not None and reader.uncancel() == 0:
                # Else cancelled for another reason too: that wins.
                if expired == "idle":
                    raise TimeoutError from None
                raise StreamDeadline(expired) from None
            raise
        finally:
            self._reader = None

    def end_by(self, at: float, reason: str) -> None:
        """End the stream by loop time `at` (sooner than its own deadline, or not at all)."""
        if at >= self._ends_at:
            return
        self._ends_at, self._end_reason = at, reason
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self._reader is not None:
            self._watchdog = asyncio.get_running_loop().call_at(min(self._deadline, at), self._look)

    def _look(self) -> None:
        self._watchdog = None
        if self._reader is None:
            return  # not waiting for the upstream: the next read arms the timer again
        loop = asyncio.get_running_loop()
        now = loop.time()
        if now >= self._ends_at:
            self._expired = self._end_reason
        elif now >= self._deadline:
            self._expired = "idle"
        else:
            self._watchdog = loop.call_at(min(self._deadline, self._ends_at), self._look)
            return
        self._reader.cancel()

    def close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        # Closing (not releasing) drops the connection, which cancels the upstream's generation.
        self.response.close()
