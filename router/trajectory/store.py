"""The trajectory store interface, and the in-memory store (the embedded default).

The memory store is bounded: least recently updated trajectories are evicted first, and
trajectories older than the time-to-live are dropped. Step records are kept packed (one compact
JSON array each, `StepRecord.pack`: ~300 bytes) and bounded in bytes, per trajectory and over
all of them; past the bound the least recently recorded trajectories lose their records first
(their totals stay).
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Protocol

from router.errors import GatewayError
from router.ledger import StepRecord
from router.trajectory.merges import Merge, merged
from router.trajectory.state import ListQuery, LostSteps, Outcome, StepSlot, StepStart, Trajectory, VaultRead

# A runaway client must not grow one trajectory without bound; its totals stay right anyway.
MAX_RECORDS_KEPT = 10_000
# What a packed record costs beyond its bytes: its end offset, and the buffer's spare room.
RECORD_OVERHEAD = 4 + 32


class StoreUnavailable(Exception):
    """The shared store cannot be reached (and the gateway is configured to refuse)."""


class StoreReplyError(GatewayError):
    """The shared store answered with an error (a bug or a full store, not an outage): this one
    operation fails; the breaker stays closed, so other tenants' steps are not affected."""

    def __init__(self, operation: str, reply: str) -> None:
        super().__init__(
            503, f"the trajectory store rejected {operation}: {reply[:200]}", type="server_error", code="store_error"
        )


class StoreBusy(GatewayError):
    """Every pooled connection to the shared store stayed in use for the whole wait: load, not
    an outage. This one operation fails (the client may retry); the breaker stays closed."""

    def __init__(self, operation: str, wait_s: float) -> None:
        super().__init__(
            503,
            f"the trajectory store is busy: no connection for {operation} within {wait_s:g} s; retry",
            type="server_error",
            code="store_busy",
            headers={"Retry-After": "1"},
        )


class TrajectoryStore(Protocol):
    async def begin_step(self, start: StepStart) -> StepSlot:
        """Count a new step, or recognise a retry of the last one; atomic across replicas."""
        ...

    async def record_many(self, records: list[StepRecord]) -> list[bool]:
        """Write step records; for each, whether it repeats an answer its step has counted
        already (an answered attempt that `counts_answer` leaves out: the same request sent
        again after its answer), which the metrics book apart from the steps."""
        ...

    async def note(self, trajectory_id: str, key: str, value: str, *, keep_first: bool = False) -> str:
        """Remember a policy's note on the trajectory; with `keep_first`, an existing value wins
        (two replicas deciding a trajectory's first step agree on one). Returns the value kept."""
        ...

    async def vault_note(self, trajectory_id: str, key: str, value: str, *, keep_first: bool = False) -> str:
        """Write a note of the trajectory's privacy vault (`router.notes.VAULT` keys), kept apart
        from its notes: a step's start does not read it. Same rules as `note`."""
        ...

    async def vault_notes(
        self, trajectory_id: str, entries: list[tuple[str, str]], *, keep_first: bool = False
    ) -> list[str]:
        """`vault_note` for each (key, value), in order, in one round trip where the store has
        them (a tool output holding thousands of values is one write, not thousands); the
        values kept, in the same order."""
        ...

    async def vault_since(self, trajectory_id: str, since: int) -> VaultRead:
        """The vault entries written after the first `since` of the trajectory's vault log."""
        ...

    async def vault(self, trajectory_id: str) -> dict[str, str]:
        """The whole vault (exposure summaries, a trajectory's close): key -> value."""
        ...

    async def get(self, trajectory_id: str) -> Trajectory | None: ...

    async def records(self, trajectory_id: str) -> list[StepRecord]: ...

    async def recent(self, query: ListQuery) -> list[Trajectory]: ...

    async def set_outcome(self, trajectory_id: str, outcome: Outcome) -> bool:
        """Store the outcome unless one is there already; False when one was."""
        ...

    async def close(self, trajectory_id: str, reason: str, at: float) -> Trajectory | None:
        """Close once: the trajectory when this call closed it, None if it was closed already."""
        ...

    async def idle(self, updated_before: float, limit: int) -> list[str]:
        """Open trajectories not updated since `updated_before`."""
        ...

    async def lost_steps(self, trajectory_id: str, lost_after_s: float) -> LostSteps:
        """The trajectory's steps counted with no record whose start is more than `lost_after_s`
        ago (router/trajectory/lost.py): what the idle sweep records lost before it closes it;
        `wait_s` when a step without a record may still be running."""
        ...

    async def record_lost(self, records: list[StepRecord], tokens: list[str]) -> list[bool]:
        """Write lost steps' records (`lost.lost_record`), each only while its step has no
        record (a real one that came meanwhile, or another replica's lost one, wins); for each,
        whether this call wrote it: the metrics count what it wrote, once over all replicas.
        Each carries a token: sent again with the same tokens after a failure (a reply lost),
        a record written then is not written twice, and this call says it was written."""
        ...

    async def stitch_find(self, key: str) -> str | None: ...

    async def stitch_remember(self, key: str, trajectory_id: str) -> None: ...

    async def stitch_find_many(self, keys: list[str]) -> list[str | None]:
        """`stitch_find` for each key, in one round trip where the store has them."""
        ...

    async def stitch_remember_many(self, pairs: list[tuple[str, str]]) -> None:
        """`stitch_remember` for each (key, value), in order, in one round trip where the store
        has them."""
        ...

    async def stitch_merge(self, merges: list[Merge]) -> None:
        """Each edit applied to its stitching entry as the entry is then (merges.py), in order,
        all at once (one Lua script in Redis: a replica's edits of the same entries at the same
        instant are applied in turn, none lost), in one round trip where the store has them."""
        ...

    async def active_count(self) -> int:
        """Open (not closed) trajectories."""
        ...

    async def ping(self) -> None: ...

    async def aclose(self) -> None: ...


def is_retry(trajectory: Trajectory, start: StepStart) -> bool:
    """A retry is the same step: the client says so, or it resends the last step's body exactly.

    Every agent step appends to the history, so an identical body carries nothing new: it is a
    client's retry (after an error, a timeout, a dropped stream). Deciding on the body alone,
    not on the last step's recorded status, keeps the rule exact although records are written
    off the request path."""
    if trajectory.steps == 0:
        return False
    return start.retry or start.fingerprint == trajectory.last_fingerprint


@dataclass(slots=True)
class _Entry:
    trajectory: Trajectory
    # The records packed (`StepRecord.pack`) end to end in one buffer, and where each ends: one
    # growing allocation per trajectory rather than an object per step, which would pin the
    # allocator's arenas between the requests' short-lived objects (RSS grows, the heap not).
    records: bytearray = field(default_factory=bytearray)
    ends: array[int] = field(default_factory=lambda: array("I"))
    record_bytes: int = 0
    attempts: int = 1
    # The privacy vault, apart from the notes (a step's snapshot does not copy it): key -> value,
    # and its log, the keys in the order they were written (read incrementally by position).
    vault: dict[str, str] = field(default_factory=dict)
    vault_log: list[str] = field(default_factory=list)


@dataclass(slots=True)
class MemoryStore:
    max_trajectories: int = 100_000
    ttl_s: float = 7 * 24 * 3600.0
    # False for the mirror of a shared store: it keeps totals, notes and pins, not the records.
    keep_records: bool = True
    record_bytes: int = 128 * 1024 * 1024  # all trajectories' records
    trajectory_record_bytes: int = 4 * 1024 * 1024  # one trajectory's
    _entries: OrderedDict[str, _Entry] = field(default_factory=OrderedDict)
    _stitch: OrderedDict[str, str] = field(default_factory=OrderedDict)
    # Trajectories holding records, least recently recorded first: the first to shed them.
    _recorded: OrderedDict[str, _Entry] = field(default_factory=OrderedDict)
    _record_bytes: int = 0

    @property
    def records_bytes(self) -> int:
        """Bytes the kept step records take (packed, with their overhead)."""
        return self._record_bytes

    def _forget_records(self, trajectory_id: str) -> None:
        entry = self._recorded.pop(trajectory_id, None)
        if entry is not None:
            self._record_bytes -= entry.record_bytes
            entry.records, entry.ends, entry.record_bytes = bytearray(), array("I"), 0

    def _pop_oldest(self) -> None:
        trajectory_id, _ = self._entries.popitem(last=False)
        self._forget_records(trajectory_id)

    def _evict(self, now: float) -> None:
        while len(self._entries) > self.max_trajectories:
            self._pop_oldest()
        while self._entries:
            oldest = next(iter(self._entries.values()))
            if now - oldest.trajectory.updated_at <= self.ttl_s:
                break
            self._pop_oldest()
        while len(self._stitch) > self.max_trajectories:
            self._stitch.popitem(last=False)

    async def begin_step(self, start: StepStart) -> StepSlot:
        entry = self._entries.get(start.trajectory_id)
        if entry is None:
            trajectory = Trajectory(
                id=start.trajectory_id,
                namespace=start.namespace,
                route=start.route,
                task=start.task,
                created_at=start.at,
            )
            entry = self._entries[start.trajectory_id] = _Entry(trajectory)
        else:
            self._entries.move_to_end(start.trajectory_id)
        trajectory = entry.trajectory
        trajectory.updated_at = start.at
        trajectory.vault_size = len(entry.vault_log)
        if is_retry(trajectory, start):
            entry.attempts += 1
            trajectory.last_status = "pending"
            return StepSlot(trajectory.steps, entry.attempts, trajectory.snapshot())
        trajectory.steps += 1
        trajectory.last_fingerprint = start.fingerprint
        trajectory.last_status = "pending"
        entry.attempts = 1
        self._evict(start.at)
        return StepSlot(trajectory.steps, 1, trajectory.snapshot())

    def knows(self, trajectory_id: str) -> bool:
        return trajectory_id in self._entries

    def adopt(self, slot: StepSlot) -> None:
        """Mirror a trajectory as the shared store returned it at the start of a step, so that
        an outage continues from there (indexes, totals, notes and pins) rather than from 1."""
        if slot.trajectory is None:
            return
        entry = self._entries.get(slot.trajectory.id)
        if entry is None:
            entry = self._entries[slot.trajectory.id] = _Entry(slot.trajectory.snapshot())
        else:
            entry.trajectory = slot.trajectory.snapshot()
            self._entries.move_to_end(slot.trajectory.id)
        # The shared store's log position is not this mirror's: its own vault is counted here.
        entry.trajectory.vault_size = len(entry.vault_log)
        entry.attempts = slot.attempt
        self._evict(slot.trajectory.updated_at)

    async def note(self, trajectory_id: str, key: str, value: str, *, keep_first: bool = False) -> str:
        entry = self._entries.get(trajectory_id)
        if entry is None:
            return value
        notes = entry.trajectory.notes
        if keep_first and key in notes:
            return notes[key]
        notes[key] = value
        return value

    async def vault_note(self, trajectory_id: str, key: str, value: str, *, keep_first: bool = False) -> str:
        entry = self._entries.get(trajectory_id)
        if entry is None:
            return value
        old = entry.vault.get(key)
        if old is not None and (keep_first or old == value):
            return old  # kept, or unchanged: nothing new for a reader
        entry.vault[key] = value
        entry.vault_log.append(key)
        return value

    async def vault_notes(
        self, trajectory_id: str, entries: list[tuple[str, str]], *, keep_first: bool = False
    ) -> list[str]:
        return [await self.vault_note(trajectory_id, key, value, keep_first=keep_first) for key, value in entries]

    def remember_vault(self, trajectory_id: str, entries: list[tuple[str, str]]) -> None:
        """Mirror vault entries the shared store returned (the vault of an outage)."""
        entry = self._entries.get(trajectory_id)
        if entry is None:
            return
        for key, value in entries:
            if entry.vault.get(key) != value:
                entry.vault[key] = value
                entry.vault_log.append(key)

    async def vault_since(self, trajectory_id: str, since: int) -> VaultRead:
        entry = self._entries.get(trajectory_id)
        if entry is None:
            return VaultRead([], since)
        log = entry.vault_log
        return VaultRead([(key, entry.vault[key]) for key in log[since:]], max(len(log), since))

    async def vault(self, trajectory_id: str) -> dict[str, str]:
        entry = self._entries.get(trajectory_id)
        return dict(entry.vault) if entry else {}

    async def record_many(self, records: list[StepRecord]) -> list[bool]:
        repeats = []
        for record in records:
            entry = self._entries.get(record.trajectory_id)
            if entry is None:
                repeats.append(False)
                continue
            repeats.append(not entry.trajectory.apply(record) and record.answered_by != "none")
            if self.keep_records and len(entry.ends) < MAX_RECORDS_KEPT:
                self._keep(record.trajectory_id, entry, record.pack())
        return repeats

    def _keep(self, trajectory_id: str, entry: _Entry, packed: bytes) -> None:
        size = len(packed) + RECORD_OVERHEAD
        if entry.record_bytes + size > self.trajectory_record_bytes:
            return  # like the count: the first records stay, the trajectory's totals count the rest
        entry.records += packed
        entry.ends.append(len(entry.records))
        entry.record_bytes += size
        self._record_bytes += size
        self._recorded[trajectory_id] = entry
        self._recorded.move_to_end(trajectory_id)
        while self._record_bytes > self.record_bytes and len(self._recorded) > 1:
            self._forget_records(next(iter(self._recorded)))

    async def get(self, trajectory_id: str) -> Trajectory | None:
        entry = self._entries.get(trajectory_id)
        return entry.trajectory if entry else None

    async def records(self, trajectory_id: str) -> list[StepRecord]:
        entry = self._entries.get(trajectory_id)
        if entry is None:
            return []
        data, ends = bytes(entry.records), entry.ends
        return [StepRecord.unpack(trajectory_id, data[start:end]) for start, end in zip([0, *ends], ends, strict=False)]

    async def recent(self, query: ListQuery) -> list[Trajectory]:
        found: list[Trajectory] = []
        for entry in reversed(self._entries.values()):
            trajectory = entry.trajectory
            if _matches(trajectory, query):
                found.append(trajectory)
        found.sort(key=lambda t: t.updated_at, reverse=True)
        return found[: query.limit]

    async def set_outcome(self, trajectory_id: str, outcome: Outcome) -> bool:
        entry = self._entries.get(trajectory_id)
        if entry is None or entry.trajectory.outcome is not None:
            return False
        entry.trajectory.outcome = outcome
        return True

    async def close(self, trajectory_id: str, reason: str, at: float) -> Trajectory | None:
        entry = self._entries.get(trajectory_id)
        if entry is None or entry.trajectory.closed_at is not None:
            return None
        entry.trajectory.closed_at = at
        entry.trajectory.close_reason = reason
        return entry.trajectory

    async def idle(self, updated_before: float, limit: int) -> list[str]:
        return [
            e.trajectory.id
            for e in self._entries.values()
            if e.trajectory.closed_at is None and e.trajectory.updated_at < updated_before
        ][:limit]

    async def lost_steps(self, trajectory_id: str, lost_after_s: float) -> LostSteps:
        # In one process a step either records itself or dies with the process and this memory:
        # none is ever counted here without a record that could still be repaired.
        return LostSteps()

    async def record_lost(self, records: list[StepRecord], tokens: list[str]) -> list[bool]:
        written = []
        for record in records:
            entry = self._entries.get(record.trajectory_id)
            written.append(entry is not None)
            if entry is not None:
                await self.record_many([record])
        return written

    async def stitch_find(self, key: str) -> str | None:
        return self._stitch.get(key)

    async def stitch_remember(self, key: str, trajectory_id: str) -> None:
        self._stitch[key] = trajectory_id
        self._stitch.move_to_end(key)
        # Only the stitching map grows here; idle trajectories go at the next step's start.
        while len(self._stitch) > self.max_trajectories:
            self._stitch.popitem(last=False)

    async def stitch_merge(self, merges: list[Merge]) -> None:
        self.merge_now(merges)

    def merge_now(self, merges: list[Merge]) -> list[tuple[str, str]]:
        """`stitch_merge` at once; the (key, value) pairs it wrote, in order."""
        stitch = self._stitch
        written: list[tuple[str, str]] = []
        for merge in merges:
            key = merge.key
            value = merged(stitch.get(key), merge)
            if value is not None:
                stitch[key] = value
                stitch.move_to_end(key)
                written.append((key, value))
        while len(stitch) > self.max_trajectories:
            stitch.popitem(last=False)
        return written

    async def stitch_find_many(self, keys: list[str]) -> list[str | None]:
        return [self._stitch.get(key) for key in keys]

    async def stitch_remember_many(self, pairs: list[tuple[str, str]]) -> None:
        for key, value in pairs:
            await self.stitch_remember(key, value)

    async def active_count(self) -> int:
        return sum(1 for entry in self._entries.values() if entry.trajectory.closed_at is None)

    async def ping(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def _matches(trajectory: Trajectory, query: ListQuery) -> bool:
    updated = trajectory.updated_at
    if query.before is not None and updated >= query.before:
        return False
    if query.since is not None and updated < query.since:
        return False
    if query.until is not None and updated > query.until:
        return False
    if query.route is not None and trajectory.route != query.route:
        return False
    return query.namespace is None or trajectory.namespace == query.namespace
