"""A clock a test moves by hand (router/clock.py's `Clock`): `time()` stands still until
`advance`, and `sleep` returns once the clock has been advanced past its end. Safe to advance
from the test's thread while the gateway's loop runs in another."""

from __future__ import annotations

import asyncio
import threading

# 2027-01-15T08:00:05Z: five seconds into a UTC minute, far from a day's end.
START = 1_800_000_005.0


class FakeClock:
    def __init__(self, start: float = START) -> None:
        self.now = start
        self._lock = threading.Lock()
        self._sleepers: list[tuple[float, asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self.slept: list[float] = []  # every duration asked for, in order

    def time(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        with self._lock:
            self.slept.append(seconds)
            self._sleepers.append((self.now + seconds, loop, waiter))
        await waiter

    @property
    def sleeping(self) -> int:
        with self._lock:
            return len(self._sleepers)

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds
            due = [s for s in self._sleepers if s[0] <= self.now]
            self._sleepers = [s for s in self._sleepers if s[0] > self.now]
        for _end, loop, waiter in due:
            loop.call_soon_threadsafe(_wake, waiter)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
