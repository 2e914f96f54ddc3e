"""Stitching requests without a session id into trajectories, telling runs from retries by what
the gateway knows.

A request continues the trajectory whose last step's history (and answer) its history starts
with. Two runs of one task send the same bodies; they are told apart thus:
- a body identical to a step whose first attempt is still in flight is another run;
- an identical body after that step failed, or after an answer the client never finished
  reading, or with `x-stainless-retry-count` > 0, is a retry of that step;
- an identical body after an answer delivered in full is another run;
- runs that diverge later are told apart by the answer each one received: a step continues the
  trajectory that was given the answer its history ends with.

Kept in the trajectory store's stitching map (so replicas sharing Redis share it):
  b:<history key>  "<trajectory id> flight|delivered|failed"  the last request with that history
  c:<history key>  "<trajectory id>|<answer key> …"            trajectories answered for it that
                                                              no later step has continued yet
A claim is a read then a write: one process serialises the claims on one history (a lock per
history key, so that requests of other histories, and other tenants, never wait behind its
round trips), but two replicas claiming the same key at the same instant may both continue one
trajectory.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from router.trajectory import identify
from router.trajectory.history import HistoryKeys
from router.trajectory.store import TrajectoryStore

MAX_CANDIDATES = 16  # runs of one task waiting to continue from the same history


class KeyLocks:
    """One lock per key, kept only while a task holds or waits for it (bounded by the requests
    in flight). Requests on different keys never wait for each other."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    def __len__(self) -> int:
        return len(self._locks)

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock, users = self._locks.get(key) or (asyncio.Lock(), 0)
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)


class Stitcher:
    def __init__(self, store: TrajectoryStore) -> None:
        self._store = store
        self._locks = KeyLocks()
        self._keys = HistoryKeys()  # hashes only the messages not seen at an earlier step

    async def find(self, namespace: str, messages: list[dict[str, Any]], client_retry: bool) -> tuple[str, str]:
        """The trajectory of a request without a session id, and its history key."""
        previous, key = self._keys.keys(namespace, messages)
        # The whole history's key, then the previous one's (its claim): always the longer
        # history first, so two finds never wait for each other in a circle.
        async with self._locks.hold(key):
            if previous is None:
                return await self._find(namespace, messages, client_retry, previous, key)
            async with self._locks.hold(previous):
                return await self._find(namespace, messages, client_retry, previous, key)

    async def _find(
        self, namespace: str, messages: list[dict[str, Any]], client_retry: bool, previous: str | None, key: str
    ) -> tuple[str, str]:
        last = await self._store.stitch_find("b:" + key)
        exclude = None
        if last is not None:
            trajectory_id, _, state = last.partition(" ")
            if client_retry or state == "failed":
                return trajectory_id, key
            exclude = trajectory_id  # in flight or answered: this is another run
        found = None
        if previous is not None:
            found = await self._claim(previous, identify.last_answer_key(messages), exclude)
        trajectory_id = found or identify.new_trajectory_id(namespace)
        await self._store.stitch_remember("b:" + key, f"{trajectory_id} flight")
        return trajectory_id, key

    async def _claim(self, previous: str, answer: str | None, exclude: str | None) -> str | None:
        raw = await self._store.stitch_find("c:" + previous)
        entries = [e.partition("|") for e in (raw or "").split()]
        waiting = [(t, a) for t, _, a in entries if t != exclude]
        if not waiting:
            # The answer's note is written off the request path and may not be there yet when
            # a fast client sends its next step: the request with that history will do.
            last = await self._store.stitch_find("b:" + previous)
            trajectory_id = last.partition(" ")[0] if last else None
            return trajectory_id if trajectory_id != exclude else None
        chosen = next(((t, a) for t, a in waiting if a == answer), waiting[0])
        left = [f"{t}|{a}" for t, _, a in entries if (t, a) != chosen]
        await self._store.stitch_remember("c:" + previous, " ".join(left))
        return chosen[0]

    async def answered(self, trajectory_id: str, key: str, status: str, answer: str) -> None:
        """After a step's answer (`answer`: its `identify.answer_key`): `ok` (delivered in full)
        makes an identical body another run and lets the next step continue this trajectory; an
        error, or a stream the client did not read to the end (`cancelled`), makes an identical
        body a retry."""
        delivered = status == "ok"
        async with self._locks.hold(key):
            await self._remember_answer(trajectory_id, key, delivered, answer)

    async def _remember_answer(self, trajectory_id: str, key: str, delivered: bool, answer: str) -> None:
        await self._store.stitch_remember("b:" + key, f"{trajectory_id} {'delivered' if delivered else 'failed'}")
        if delivered:
            raw = await self._store.stitch_find("c:" + key)
            entries = [*(raw or "").split(), f"{trajectory_id}|{answer}"]
            await self._store.stitch_remember("c:" + key, " ".join(entries[-MAX_CANDIDATES:]))
