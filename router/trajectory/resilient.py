"""Redis with a way out: when the shared store fails, degrade to memory (or refuse) and recover.

A failure opens a short breaker so that a Redis that hangs does not cost every request its
timeout; after the breaker, the next call tries Redis again, and the first success closes it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

import redis.exceptions

from router.ledger import StepRecord
from router.trajectory.state import ListQuery, Outcome, StepSlot, StepStart, Trajectory
from router.trajectory.store import MemoryStore, StoreUnavailable, TrajectoryStore

log = logging.getLogger("tandem.store")
T = TypeVar("T")
STORE_ERRORS = (redis.exceptions.RedisError, OSError, TimeoutError)


class ResilientStore:
    def __init__(
        self,
        primary: TrajectoryStore,
        fallback: MemoryStore,
        mode: Literal["degrade", "refuse"],
        on_error: Callable[[str], None],
        breaker_s: float = 1.0,
    ) -> None:
        self.primary = primary
        self.fallback = fallback
        self._mode = mode
        self._on_error = on_error
        self._breaker_s = breaker_s
        self._open_until = 0.0
        self.degraded = False

    async def _run(self, operation: str, call: Callable[[TrajectoryStore], Awaitable[T]]) -> T:
        if time.monotonic() >= self._open_until:
            try:
                result = await call(self.primary)
            except STORE_ERRORS as exc:
                self._open_until = time.monotonic() + self._breaker_s
                self._on_error(operation)
                if not self.degraded:
                    log.warning(
                        "trajectory store failed (%s: %s); %s",
                        operation,
                        exc,
                        "serving from memory" if self._mode == "degrade" else "refusing steps",
                    )
                self.degraded = True
            else:
                if self.degraded:
                    log.warning("trajectory store is back; leaving degraded mode")
                    self.degraded = False
                return result
        if self._mode == "refuse":
            raise StoreUnavailable("the shared trajectory store (Redis) is unavailable")
        return await call(self.fallback)

    async def begin_step(self, start: StepStart) -> StepSlot:
        return await self._run("begin_step", lambda s: s.begin_step(start))

    async def record_many(self, records: list[StepRecord]) -> None:
        await self._run("record", lambda s: s.record_many(records))

    async def note(self, trajectory_id: str, key: str, value: str, *, keep_first: bool = False) -> str:
        return await self._run("note", lambda s: s.note(trajectory_id, key, value, keep_first=keep_first))

    async def get(self, trajectory_id: str) -> Trajectory | None:
        return await self._run("get", lambda s: s.get(trajectory_id))

    async def records(self, trajectory_id: str) -> list[StepRecord]:
        return await self._run("records", lambda s: s.records(trajectory_id))

    async def recent(self, query: ListQuery) -> list[Trajectory]:
        return await self._run("recent", lambda s: s.recent(query))

    async def set_outcome(self, trajectory_id: str, outcome: Outcome) -> bool:
        return await self._run("set_outcome", lambda s: s.set_outcome(trajectory_id, outcome))

    async def close(self, trajectory_id: str, reason: str, at: float) -> Trajectory | None:
        return await self._run("close", lambda s: s.close(trajectory_id, reason, at))

    async def idle(self, updated_before: float, limit: int) -> list[str]:
        return await self._run("idle", lambda s: s.idle(updated_before, limit))

    async def stitch_find(self, key: str) -> str | None:
        return await self._run("stitch", lambda s: s.stitch_find(key))

    async def stitch_remember(self, key: str, trajectory_id: str) -> None:
        await self._run("stitch", lambda s: s.stitch_remember(key, trajectory_id))

    async def active_count(self) -> int:
        return await self._run("active_count", lambda s: s.active_count())

    async def ping(self) -> None:
        await self.primary.ping()

    async def aclose(self) -> None:
        await self.primary.aclose()
