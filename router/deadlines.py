"""Deadlines of one fixed length, for a call every step makes: `asyncio.timeout` without a timer
per call.

`async with asyncio.timeout(delay)` creates, schedules and cancels an event-loop timer each time
(about 9 µs on uvloop here, a few hundredths of a step's CPU at saturation). Every call to one
upstream waits for its first byte at most the same `timeouts.first_byte`, so its deadlines fall
due in the order the calls began: `Deadlines` keeps the calls in flight in that order and one
timer for the earliest. A call that ends removes itself (a dict deletion); the timer, when it
fires, cancels the calls that are due and is set again for the next one still in flight.

Entering and leaving behave as `asyncio.timeout(delay)`'s: the task is cancelled when its
deadline passes, and the `CancelledError` that comes out of the block becomes `TimeoutError`;
a cancellation from elsewhere stays a cancellation.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType


class Deadlines:
    """The deadlines, `delay` seconds after each call's start, of the calls in flight."""

    __slots__ = ("_delay", "_flying", "_loop", "_timer")

    def __init__(self, delay: float) -> None:
        self._delay = delay
        # The calls in flight, in the order they began: the order their deadlines fall due.
        self._flying: dict[Within, None] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __len__(self) -> int:
        return len(self._flying)

    def within(self) -> Within:
        """`async with deadlines.within():` the block, given up with `TimeoutError` after `delay`."""
        return Within(self)

    def _enter(self, call: Within, loop: asyncio.AbstractEventLoop) -> None:
        if self._loop is not loop:
            # A loop that is gone (a test's earlier one) left its calls and timer: start afresh.
            self._loop, self._flying, self._timer = loop, {}, None
        call.due = loop.time() + self._delay
        self._flying[call] = None
        if self._timer is None:
            self._timer = loop.call_at(call.due, self._fire)

    def _leave(self, call: Within) -> None:
        self._flying.pop(call, None)

    def _fire(self) -> None:
        self._timer = None
        loop = self._loop
        assert loop is not None
        now = loop.time()
        flying = self._flying
        while flying:
            call = next(iter(flying))
            if call.due > now:
                self._timer = loop.call_at(call.due, self._fire)
                return
            del flying[call]
            call.expire()


class Within:
    """One call's deadline (`Deadlines.within`)."""

    __slots__ = ("_cancelling", "_deadlines", "_task", "due", "expired")

    def __init__(self, deadlines: Deadlines) -> None:
        self._deadlines = deadlines
        self._task: asyncio.Task[object] | None = None
        self._cancelling = 0
        self.due = 0.0
        self.expired = False

    async def __aenter__(self) -> Within:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        if task is None:
            raise RuntimeError("a deadline must be used inside a task")
        self._task = task
        self._cancelling = task.cancelling()
        self._deadlines._enter(self, loop)
        return self

    def expire(self) -> None:
        self.expired = True
        task = self._task
        if task is not None and not task.done():
            # A task of a loop that has closed cannot be cancelled: nobody waits for it.
            with contextlib.suppress(RuntimeError):
                task.cancel()

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._deadlines._leave(self)
        if self.expired:
            assert self._task is not None
            if self._task.uncancel() <= self._cancelling and kind is asyncio.CancelledError:
                raise TimeoutError from error
