"""What a replica did while the shared store was out, kept in order and written back on recovery.

Every write the store missed is kept here: steps counted in memory, step records, notes,
outcomes, closes, stitching keys. It is bounded in steps: past `max_items` steps counted during
the outage (or `ENTRIES_PER_STEP` times as many entries), new ones are dropped and counted. On
recovery they are replayed in order. A step counted during the outage is counted again in Redis
as a new step, so that two replicas that both counted "step 6" of one trajectory end with two
steps, 6 and 7; its records are renumbered to match. Every step start and record carries a
token, so that one the store executed although its reply was lost (a frozen Redis that
resumes) counts once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import redis.exceptions

from router.ledger import StepRecord
from router.trajectory.state import StepStart

if TYPE_CHECKING:
    from router.trajectory.redis_store import RedisStore

log = logging.getLogger("tandem.store")
# Replies that say the store takes no writes for now: not a write to drop, a reason to wait.
WRITES_REFUSED = (redis.exceptions.OutOfMemoryError, redis.exceptions.ReadOnlyError)


@dataclass(slots=True)
class CountedStep:
    """A new step counted in memory during the outage, with the index its client was told."""

    start: StepStart
    local_step: int


@dataclass(slots=True)
class Records:
    records: list[StepRecord]
    tokens: list[str]


@dataclass(slots=True)
class Note:
    trajectory_id: str
    key: str
    value: str
    keep_first: bool
    vault: bool = False  # a note of the privacy vault (kept apart from the notes)


@dataclass(slots=True)
class Write:
    """An idempotent write (an outcome, a close, a stitching key), replayed as it was."""

    kind: str
    call: Callable[[RedisStore], Awaitable[object]]


Entry = CountedStep | Records | Note | Write
# Items (step starts, records, notes) written back in one round trip each: under load a round
# trip costs dozens of turns of the event loop whatever its size, so batches are large.
BATCH = 8192
# Entries (records, notes, keys, outcomes…) kept for each step of the bound at most: a step keeps
# ~4; the rest is room for the records of steps begun before the outage. Bounds the memory only.
ENTRIES_PER_STEP = 16


def _size(entry: Entry) -> int:
    return len(entry.records) if isinstance(entry, Records) else 1


entry_size = _size


class Keeper(Protocol):
    """What also keeps the entries outside the process (router/trajectory/journal_file.py)."""

    def kept(self, entry: Entry) -> None:
        """An entry is about to join the journal (before the step it belongs to is answered)."""

    def left(self, entry: Entry) -> None:
        """The oldest entry left the journal (written back, or dropped)."""


class Journal:
    def __init__(
        self,
        max_items: int,
        on_size: Callable[[int], None] = lambda size: None,
        on_dropped: Callable[[str, int], None] = lambda kind, count: None,
        on_written: Callable[[str, int], None] = lambda kind, count: None,
    ) -> None:
        self.max_items = max_items
        self.keeper: Keeper | None = None
        self._entries: deque[Entry] = deque()
        self._size = 0
        self.steps = 0  # steps counted during the outage that are kept (what `max_items` bounds)
        self.written = 0  # items written back since start
        self._on_size = on_size
        self._on_dropped = on_dropped
        self._on_written = on_written
        # (trajectory id, index its client was told) -> the index the shared store gave it and
        # the attempts it had counted of that step before (a retry whose start the store
        # executed late, while this replica counted it apart as a step's first attempt).
        self._renumbered: OrderedDict[tuple[str, int], tuple[int, int]] = OrderedDict()
        # Steps dropped (the journal was full): their records are dropped too, not written back
        # as records of steps the shared store never counted.
        self._lost: OrderedDict[tuple[str, int], None] = OrderedDict()

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries)

    def add(self, entry: Entry) -> bool:
        if isinstance(entry, Records) and self._lost:
            entry = self._without_lost(entry)
        size = _size(entry)
        step = 1 if isinstance(entry, CountedStep) else 0
        if self.steps + step > self.max_items or self._size + size > self.max_items * ENTRIES_PER_STEP:
            self._on_dropped(_kind(entry), size)
            if isinstance(entry, CountedStep):
                self._lost[(entry.start.trajectory_id, entry.local_step)] = None
                while len(self._lost) > self.max_items:
                    self._lost.popitem(last=False)
            return False
        if not size:
            return False
        if self.keeper is not None:
            self.keeper.kept(entry)
        self._entries.append(entry)
        self._size += size
        self.steps += step
        self._on_size(len(self))
        return True

    def _without_lost(self, entry: Records) -> Records:
        kept = [
            (r, t)
            for r, t in zip(entry.records, entry.tokens, strict=True)
            if (r.trajectory_id, r.step) not in self._lost
        ]
        if len(kept) < len(entry.records):
            self._on_dropped("record", len(entry.records) - len(kept))
        return Records([r for r, _ in kept], [t for _, t in kept])

    def restore(self, entries: list[Entry]) -> None:
        """Entries an earlier run kept (its keeper holds them already), to be written back first."""
        for entry in entries:
            self._entries.append(entry)
            self._size += _size(entry)
            self.steps += 1 if isinstance(entry, CountedStep) else 0
        self._on_size(self._size)

    def renumber(self, records: list[StepRecord], apart_only: bool = False) -> list[StepRecord]:
        """Records of steps counted during an outage, with the index the shared store gave.
        With `apart_only` only those whose step was counted apart: once the store is back, a
        store that lost its data counts the next steps from 1 again, and a step it counted may
        have the index of one that was renumbered. A record is renumbered once: the journal keeps
        records with the index their client was told, and renumbers them as it writes them back.
        Their attempts follow the store's: a step it counted as a retry (attempt 2) has its
        attempts counted apart (1, 2, …) after that one, not two records of one attempt."""
        if not self._renumbered:
            return records
        out = []
        for record in records:
            if apart_only and not record.counted_apart:
                out.append(record)
                continue
            slot = self._renumbered.get((record.trajectory_id, record.step))
            if slot is None:
                out.append(record)
            else:
                index, before = slot
                out.append(dataclasses.replace(record, step=index, attempt=record.attempt + before))
        return out

    async def write_back(self, primary: RedisStore, catch_up: bool = False) -> None:
        """Replay every entry in order, in batches. A batch is two rounds of round trips: the
        step starts and the stitching keys (in their order) at once; then the records (after the
        starts, so that they are renumbered) and the notes (in their order) at once; then the
        batch's other writes (outcomes, closes). An entry leaves once written. With `catch_up`,
        returns once a batch wrote at least as much as is left: new entries join while it
        writes, and under load a round trip takes about as long whatever its size, so the rest
        is best written as one last batch (ResilientStore's handover, new calls waiting for it).
        An outage raises and the rest waits for the next try; an entry Redis refuses for good (an
        error reply) is dropped and counted, so that it cannot hold back every later one."""
        while self._entries:
            batch = self._next_batch()
            try:
                await self._write(batch, primary)
            except WRITES_REFUSED:
                raise  # the store takes no writes for now (full, read-only): keep them all
            except redis.exceptions.ResponseError as exc:
                if len(batch) > 1:
                    await self._write_one_by_one(batch, primary)
                    continue
                log.error("dropping a %s kept during the outage: Redis refused it (%s)", _kind(batch[0]), exc)
                self._done(batch[0], written=False)
                continue
            for entry in batch:
                self._done(entry, written=True)
            if catch_up and len(self) <= sum(_size(entry) for entry in batch):
                return

    async def _write_one_by_one(self, batch: list[Entry], primary: RedisStore) -> None:
        for entry in batch:
            try:
                await self._write([entry], primary)
            except WRITES_REFUSED:
                raise
            except redis.exceptions.ResponseError as exc:
                log.error("dropping a %s kept during the outage: Redis refused it (%s)", _kind(entry), exc)
                self._done(entry, written=False)
            else:
                self._done(entry, written=True)

    async def _count(self, steps: list[CountedStep], primary: RedisStore) -> None:
        if not steps:
            return
        slots = await primary.count_new_steps([counted.start for counted in steps])
        for counted, slot in zip(steps, slots, strict=True):
            if slot.step != counted.local_step or slot.attempt != 1:
                key = (counted.start.trajectory_id, counted.local_step)
                self._renumbered[key] = (slot.step, slot.attempt - 1)
        while len(self._renumbered) > self.max_items:
            self._renumbered.popitem(last=False)

    def _next_batch(self) -> list[Entry]:
        # Writes (outcomes, closes, stitching keys) join the batch rather than end it: under load
        # each round trip waits behind the requests, and a batch cut at every stitching key (two
        # a step without a session id) drained slower than steps came in. They run after the
        # batch's steps, records and notes, in their own order; none of them depends on being
        # written before a later step, record or note (a close before a step ends closed alike).
        batch: list[Entry] = []
        items = 0
        for entry in self._entries:
            if batch and items + _size(entry) > BATCH:
                break
            batch.append(entry)
            items += _size(entry)
        return batch

    def _done(self, entry: Entry, written: bool) -> None:
        assert self._entries[0] is entry
        self._entries.popleft()
        if self.keeper is not None:
            self.keeper.left(entry)
        size = _size(entry)
        self._size -= size
        self.steps -= 1 if isinstance(entry, CountedStep) else 0
        self._on_size(len(self))
        if written:
            self.written += size
            self._on_written(_kind(entry), size)
        else:
            self._on_dropped(_kind(entry), size)

    async def _write(self, batch: list[Entry], primary: RedisStore) -> None:
        # Round trips that touch apart keys go at once (under load each waits for turns of the
        # event loop, so one after the other would add up): the starts with the stitching keys
        # (one round trip for them all: two or three a step without a session id); then, once
        # the starts are counted (a trajectory's first start clears a vault left under its id,
        # and gives the records their indexes), the records with the notes.
        steps = [entry for entry in batch if isinstance(entry, CountedStep)]
        keys = [key for key in (_stitching(w) for w in batch if isinstance(w, Write)) if key is not None]
        stitching = primary.stitch_remember_many(keys) if keys else None
        await _all(self._count(steps, primary), stitching)
        kept = [entry for entry in batch if isinstance(entry, Records)]
        notes = [(n.trajectory_id, n.key, n.value, n.keep_first, n.vault) for n in batch if isinstance(n, Note)]
        recording = None
        if kept:
            records = self.renumber([record for entry in kept for record in entry.records], apart_only=True)
            recording = primary.record_many(records, [token for entry in kept for token in entry.tokens])
        await _all(recording, primary.note_many(notes) if notes else None)
        for write in batch:
            if isinstance(write, Write) and _stitching(write) is None:
                await write.call(primary)


def _stitching(write: Write) -> tuple[str, str] | None:
    """The (key, trajectory id) of a kept stitching key (a `StoreCall` of `stitch_remember`,
    router/trajectory/journal_codec.py), else None."""
    if getattr(write.call, "method", None) != "stitch_remember":
        return None
    key, trajectory_id = getattr(write.call, "args", ("", ""))
    return str(key), str(trajectory_id)


async def _all(*calls: Awaitable[object] | None) -> None:
    """Await the calls at once; the first failure raises once every call has ended."""
    outcomes = await asyncio.gather(*(call for call in calls if call is not None), return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome


def _kind(entry: Entry) -> str:
    if isinstance(entry, CountedStep):
        return "step"
    if isinstance(entry, Records):
        return "record"
    if isinstance(entry, Note):
        return "note"
    return entry.kind
