"""Time as the gateway's timers read it (the Redis breaker, the client-limit windows): one
object to pass in, so that a test moves time forward instead of sleeping through it
(tests/fake_clock.py)."""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    def time(self) -> float:
        """Unix seconds (the client limits count in UTC minutes and days)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait this long (the breaker between two probes of the store)."""
        ...


class SystemClock:
    def time(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


SYSTEM_CLOCK = SystemClock()
