"""Redis with a way out: when the shared store is out, keep serving (or refuse), lose nothing.

Only an outage counts as one: a connection error or a timeout. A busy connection pool is load:
a call waits for a free connection, and one that waits too long fails alone (503 `store_busy`).
A reply error (a bad command) fails that one operation and leaves the other tenants' steps alone.
A store that refuses writes for now (Redis at maxmemory, a read-only replica) is handled like an
outage, with its own cause: its writes are kept for write-back rather than lost, loudly.

While healthy, memory mirrors each trajectory as Redis returns it at the start of a step, so
that in an outage a trajectory continues from there: its indexes, totals, notes and pin. During
an outage every write goes to memory and to the journal (bounded); a probe every `breaker_s`
waits for Redis, writes the journal back in order, and only then leaves degraded mode. Under
load new writes keep joining the journal while it is written back; once a batch wrote as much as
is left, new calls wait for one last batch (a handover) and then go to Redis, so it empties.
With `outage_journal_dir` set the journal is also kept on disk (router/trajectory/journal_file.py):
what a stopped worker kept is written back at the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

import redis.exceptions

from router.clock import SYSTEM_CLOCK, Clock
from router.config.base import ConfigError
from router.ledger import StepRecord
from router.metrics.core import Metrics
from router.trajectory.journal import WRITES_REFUSED, CountedStep, Journal, Note, Records, Write
from router.trajectory.journal_codec import StoreCall
from router.trajectory.journal_file import JournalFile
from router.trajectory.merges import Merge
from router.trajectory.redis_store import PoolBusy, RedisStore
from router.trajectory.state import ListQuery, LostSteps, Outcome, StepSlot, StepStart, Trajectory, VaultRead
from router.trajectory.store import MemoryStore, StoreBusy, StoreReplyError, StoreUnavailable, TrajectoryStore

log = logging.getLogger("tandem.store")
T = TypeVar("T")
# redis-py's ConnectionError covers a refused or reset connection and a Redis still loading.
OUTAGE_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError, TimeoutError)
# How often a store that stays full (or read-only) is logged again while writes wait.
STILL_REFUSING_LOG_S = 60.0
# How long after a write-back began no step is recorded lost (router/trajectory/lost.py), unless
# told: the gateway gives its lost-step bound, so that the end of an outage counts as a step
# start of every trajectory (another replica's journal may hold a record of any of them).
WRITE_BACK_MARK_S = 300.0


class ResilientStore:
    def __init__(
        self,
        primary: RedisStore,
        fallback: MemoryStore,
        mode: Literal["degrade", "refuse"],
        metrics: Metrics | None = None,
        breaker_s: float = 1.0,
        journal_max: int = 100_000,
        clock: Clock = SYSTEM_CLOCK,
        journal_file: JournalFile | None = None,
        write_back_mark_s: float = WRITE_BACK_MARK_S,
    ) -> None:
        self.primary = primary
        self._write_back_mark_s = write_back_mark_s
        self.fallback = fallback
        self._mode = mode
        self._metrics = metrics or Metrics()
        self._breaker_s = breaker_s
        # What the breaker waits with between two probes (a test's clock moves it by hand).
        self.clock = clock
        m = self._metrics
        self.journal = Journal(
            journal_max,
            on_size=m.store_outage_pending.set,
            on_dropped=lambda kind, count: m.store_outage_dropped.labels(kind).inc(count),
            on_written=lambda kind, count: m.store_written_back.labels(kind).inc(count),
        )
        self.journal_file = journal_file
        if journal_file is not None:
            self.journal.keeper = journal_file
            journal_file.live = lambda: iter(self.journal)
        # Trajectories first seen during an outage: what another replica knows of them is unknown.
        self._unknown: OrderedDict[str, None] = OrderedDict()
        self._recovery: asyncio.Task[None] | None = None
        self.degraded = False
        # Set while the last of the journal is written back: calls wait for it, then use Redis.
        self._handover: asyncio.Event | None = None

    # -- the outage ------------------------------------------------------------------------

    async def _try(self, operation: str, call: Callable[[RedisStore], Awaitable[T]]) -> tuple[bool, T | None]:
        """(True, result) from Redis, or (False, None) once the store is (or just went) out."""
        if self.degraded:
            if self._handover is None:
                return False, None
            await self._handover.wait()
            if self.degraded:
                return False, None
        try:
            return True, await call(self.primary)
        except PoolBusy as exc:
            if self.degraded:
                return False, None  # the store went out while this call waited: the journal takes it
            # Load, not an outage: this one call fails; the breaker stays closed.
            self._metrics.store_busy.labels(operation).inc()
            raise StoreBusy(operation, self.primary.pool_wait_s) from exc
        except OUTAGE_ERRORS as exc:
            self._metrics.store_errors.labels(operation).inc()
            self._enter_outage(operation, exc, "unreachable")
            return False, None
        except WRITES_REFUSED as exc:
            self._metrics.store_reply_errors.labels(operation).inc()
            self._enter_outage(operation, exc, _cause(exc))
            return False, None
        except redis.exceptions.RedisError as exc:
            self._metrics.store_reply_errors.labels(operation).inc()
            raise StoreReplyError(operation, str(exc)) from exc

    def _enter_outage(self, operation: str, exc: BaseException, cause: str = "unreachable") -> None:
        if self.degraded:
            return
        self.degraded = True
        self.primary.mark_out(True)  # calls waiting for a connection give up now
        self._metrics.store_outages.labels(cause).inc()
        serving = "serving from memory" if self._mode == "degrade" else "refusing steps"
        if cause == "unreachable":
            log.warning(
                "trajectory store is out (%s: %s); %s, keeping its writes for when it is back", operation, exc, serving
            )
        else:
            # Redis answers but takes no writes: an operator must act (memory, failover).
            log.error(
                "trajectory store refuses writes (%s: %s); %s, keeping its writes in the write-back journal "
                "until it takes them again (free memory or raise maxmemory; point redis_url at the primary)",
                operation,
                exc,
                serving,
            )
        if self._recovery is None or self._recovery.done():
            self._recovery = asyncio.create_task(self._recover(), name="tandem-store-recovery")

    async def _recover(self) -> None:
        refusing_logged = self.clock.time()
        while True:
            await self.clock.sleep(self._breaker_s)
            try:
                # Fresh connections: a pool of ones to a Redis that restarted would make each
                # try (and then each step) fail once more, one after the other.
                await self.primary.reset_connections()
                # Only this task uses Redis while degraded (every other call is kept in memory).
                self.primary.mark_out(False)
                await self.primary.ping()
                await self._write_back()
            except OUTAGE_ERRORS:
                self._metrics.store_errors.labels("write_back").inc()
                continue
            except WRITES_REFUSED as exc:
                self._metrics.store_reply_errors.labels("write_back").inc()
                if self.clock.time() - refusing_logged >= STILL_REFUSING_LOG_S:
                    refusing_logged = self.clock.time()
                    log.error(
                        "trajectory store still refuses writes (%s); %d kept for write-back", exc, len(self.journal)
                    )
                continue
            except Exception:
                # A write the store refuses for good would block every later one: log it, and
                # keep trying (an operator sees the pending figure not going down).
                log.exception("could not write back to the trajectory store; trying again")
                self._metrics.store_reply_errors.labels("write_back").inc()
                continue
            log.warning("trajectory store is back; its missed writes are written back")
            return

    async def _write_back(self) -> None:
        """Write the journal back while new writes still join it; then the last batch, with new
        calls waiting (each at most that batch's round trips), and leave degraded mode."""
        # First, whatever this journal holds: the other replicas may be writing theirs back (or
        # about to), and until then a step whose record waits in one is not lost.
        await self.primary.mark_write_back(self._write_back_mark_s)
        await self.journal.write_back(self.primary, catch_up=True)
        handover = self._handover = asyncio.Event()
        try:
            await self.journal.write_back(self.primary)
            # Nothing awaited between the journal found empty and this: no write slips between.
            self.degraded = False
        finally:
            self._handover = None
            handover.set()

    def _refuse(self) -> None:
        if self._mode == "refuse":
            raise StoreUnavailable("the shared trajectory store (Redis) is unavailable")

    def _keep(self, kind: str, call: StoreCall) -> None:
        self.journal.add(Write(kind, call))

    # -- the journal on disk -----------------------------------------------------------------

    async def start(self) -> None:
        """Take over what earlier runs kept on disk, and write it back now if Redis answers
        (before the first step: their steps come before any new one). Without a journal on
        disk, one PING: a Redis that is out at start is said in the log now, not at the first
        step (`_enter_outage`)."""
        if self.journal_file is None:
            with contextlib.suppress(StoreBusy, StoreReplyError):
                await self._try("ping", lambda s: s.ping())
            return
        try:
            entries = self.journal_file.open()
        except OSError as exc:
            # Not served with the journal in memory only: the durability asked for would be gone
            # unseen (`tandem check` and `tandem serve` find such a folder before this).
            raise ConfigError(
                f"trajectories.outage_journal_dir: cannot keep the outage journal in "
                f"{self.journal_file.directory} ({exc.strerror or exc})"
            ) from exc
        if not entries:
            return
        self.journal.restore(entries)
        log.warning("writing back %d write(s) kept on disk by an earlier run", len(self.journal))
        try:
            await self.primary.ping()
            await self.primary.mark_write_back(self._write_back_mark_s)
            await self.journal.write_back(self.primary)
        except Exception as exc:
            # Redis out or refusing writes: the probe writes them back once it takes them.
            self._enter_outage("write_back", exc, _cause(exc) if isinstance(exc, WRITES_REFUSED) else "unreachable")

    async def durable(self) -> None:
        """Wait until what the outage kept so far is on the disk (at once with no journal file,
        or an empty journal); many waiters share one sync."""
        if self.journal_file is not None and len(self.journal):
            await self.journal_file.synced()

    # -- writes ----------------------------------------------------------------------------

    async def begin_step(self, start: StepStart) -> StepSlot:
        if not start.token:
            start = dataclasses.replace(start, token=uuid.uuid4().hex)
        ok, slot = await self._try("begin_step", lambda s: s.begin_step(start))
        if ok and slot is not None:
            self.fallback.adopt(slot)
            self._unknown.pop(start.trajectory_id, None)
            return slot
        self._refuse()
        if not self.fallback.knows(start.trajectory_id):
            self._unknown[start.trajectory_id] = None
            while len(self._unknown) > self.journal.max_items:
                self._unknown.popitem(last=False)
        local = await self.fallback.begin_step(start)
        if local.attempt == 1:
            self.journal.add(CountedStep(start, local.step))
        unknown = start.trajectory_id in self._unknown
        return StepSlot(local.step, local.attempt, local.trajectory, state_unknown=unknown, counted_apart=True)

    async def record_many(self, records: list[StepRecord]) -> list[bool]:
        if self._handover is not None:
            # The last batch may count the steps of these records: their indexes after it.
            await self._handover.wait()
        # Renumbered for Redis and the mirror only: the journal keeps the index the client was
        # told, and its write-back renumbers it (once; the map may have grown by then). A record
        # renumbered here and again there would take another step's index.
        renumbered = self.journal.renumber(records, apart_only=True)
        tokens = [uuid.uuid4().hex for _ in records]
        while True:
            try:
                ok, shared = await self._try("record", lambda s: s.record_many(renumbered, tokens))
                break
            except StoreBusy:
                # Records leave the request path: they wait for a connection, they are not lost.
                continue
        # The mirror keeps the totals that constraints read (budgets, shares, gaps).
        mirrored = await self.fallback.record_many(renumbered)
        if not ok:
            self.journal.add(Records(records, tokens))
        # Out of Redis, the mirror's word on repeats, so that the metrics go on counting steps
        # through an outage (Redis decides again when the journal is written back; a step
        # answered on two replicas during the outage is booked by both, counted once there).
        return shared if ok and shared is not None else mirrored

    async def note(self, trajectory_id: str, key: str, value: str, *, keep_first: bool = False) -> str:
        ok, kept = await self._try("note", lambda s: s.note(trajectory_id, key, value, keep_first=keep_first))
        if ok and kept is not None:
            await self.fallback.note(trajectory_id, key, kept)
            return kept
        self.journal.add(Note(trajectory_id, key, value, keep_first))
        return await self.fallback.note(trajectory_id, key, value, keep_first=keep_first)

    async def vault_note(self, trajectory_id: str, key: str, value: str, *, keep_first: bool = False) -> str:
        ok, kept = await self._try("note", lambda s: s.vault_note(trajectory_id, key, value, keep_first=keep_first))
        if ok and kept is not None:
            self.fallback.remember_vault(trajectory_id, [(key, kept)])
            return kept
        self.journal.add(Note(trajectory_id, key, value, keep_first, vault=True))
        return await self.fallback.vault_note(trajectory_id, key, value, keep_first=keep_first)

    async def vault_notes(
        self, trajectory_id: str, entries: list[tuple[str, str]], *, keep_first: bool = False
    ) -> list[str]:
        ok, kept = await self._try("note", lambda s: s.vault_notes(trajectory_id, entries, keep_first=keep_first))
        if ok and kept is not None:
            self.fallback.remember_vault(trajectory_id, list(zip((key for key, _ in entries), kept, strict=True)))
            return kept
        for key, value in entries:
            self.journal.add(Note(trajectory_id, key, value, keep_first, vault=True))
        return await self.fallback.vault_notes(trajectory_id, entries, keep_first=keep_first)

    async def vault_since(self, trajectory_id: str, since: int) -> VaultRead:
        ok, read = await self._try("vault", lambda s: s.vault_since(trajectory_id, since))
        if ok and read is not None:
            # Mirrored, so that an outage still redacts what this replica read.
            self.fallback.remember_vault(trajectory_id, read.entries)
            return read
        # Not refused even in `refuse` mode: the step has begun, and the mirror serves it.
        # The mirror's log is in its own order: a reader that has read the shared log has
        # learned all it holds (what it read, what this replica wrote); one that has read
        # nothing gets all of it, and its position stays where it was for when Redis is back.
        if since > 0:
            return VaultRead([], since)
        return VaultRead(list((await self.fallback.vault(trajectory_id)).items()), since)

    async def vault(self, trajectory_id: str) -> dict[str, str]:
        return await self._read("vault", lambda s: s.vault(trajectory_id))

    async def set_outcome(self, trajectory_id: str, outcome: Outcome) -> bool:
        ok, stored = await self._try("set_outcome", lambda s: s.set_outcome(trajectory_id, outcome))
        if ok:
            await self.fallback.set_outcome(trajectory_id, outcome)
            return bool(stored)
        self._refuse()
        self._keep("set_outcome", StoreCall("set_outcome", (trajectory_id, outcome)))
        return await self.fallback.set_outcome(trajectory_id, outcome)

    async def lost_steps(self, trajectory_id: str, lost_after_s: float) -> LostSteps:
        ok, found = await self._try("close", lambda s: s.lost_steps(trajectory_id, lost_after_s))
        if ok and found is not None:
            return found
        # Out (the sweep closes nothing during an outage anyway): not now.
        return LostSteps(wait_s=self._breaker_s)

    async def record_lost(self, records: list[StepRecord], tokens: list[str]) -> list[bool]:
        ok, written = await self._try("record", lambda s: s.record_lost(records, tokens))
        if not ok or written is None:
            # Not journalled: whether Redis ran them before it went out is not known, and the
            # caller sends them again with the same tokens once it is back (which tells).
            raise StoreUnavailable("the shared trajectory store (Redis) went out while lost steps were recorded")
        # The mirror keeps the totals that constraints read, as for any record.
        await self.fallback.record_many([record for record, wrote in zip(records, written, strict=True) if wrote])
        return written

    async def close(self, trajectory_id: str, reason: str, at: float) -> Trajectory | None:
        ok, closed = await self._try("close", lambda s: s.close(trajectory_id, reason, at))
        if ok:
            await self.fallback.close(trajectory_id, reason, at)
            return closed
        self._refuse()
        self._keep("close", StoreCall("close", (trajectory_id, reason, at)))
        return await self.fallback.close(trajectory_id, reason, at)

    async def stitch_remember(self, key: str, trajectory_id: str) -> None:
        ok, _ = await self._try("stitch", lambda s: s.stitch_remember(key, trajectory_id))
        if not ok:
            self._keep("stitch", StoreCall("stitch_remember", (key, trajectory_id)))
        await self.fallback.stitch_remember(key, trajectory_id)

    async def stitch_remember_many(self, pairs: list[tuple[str, str]]) -> None:
        if not pairs:
            return
        ok, _ = await self._try("stitch", lambda s: s.stitch_remember_many(pairs))
        if not ok:
            # Each key journalled on its own, in order: setting a key again is harmless, so a
            # batch cut off midway by the outage is simply written whole at the write-back.
            for key, value in pairs:
                self._keep("stitch", StoreCall("stitch_remember", (key, value)))
        await self.fallback.stitch_remember_many(pairs)

    async def stitch_merge(self, merges: list[Merge]) -> None:
        if not merges:
            return
        ok, _ = await self._try("stitch", lambda s: s.stitch_merge(merges))
        # Applied here too, as every stitching write is; while the store is out, the entries
        # this gives are what the write-back sets (each key journalled on its own, in order).
        written = self.fallback.merge_now(merges)
        if not ok:
            for key, value in written:
                self._keep("stitch", StoreCall("stitch_remember", (key, value)))

    # -- reads -----------------------------------------------------------------------------

    async def _read(self, operation: str, call: Callable[[TrajectoryStore], Awaitable[T]]) -> T:
        ok, result = await self._try(operation, call)
        if ok:
            return result  # type: ignore[return-value]
        self._refuse()
        return await call(self.fallback)

    async def get(self, trajectory_id: str) -> Trajectory | None:
        return await self._read("get", lambda s: s.get(trajectory_id))

    async def records(self, trajectory_id: str) -> list[StepRecord]:
        return await self._read("records", lambda s: s.records(trajectory_id))

    async def recent(self, query: ListQuery) -> list[Trajectory]:
        return await self._read("recent", lambda s: s.recent(query))

    async def idle(self, updated_before: float, limit: int) -> list[str]:
        return await self._read("idle", lambda s: s.idle(updated_before, limit))

    async def stitch_find(self, key: str) -> str | None:
        return await self._read("stitch", lambda s: s.stitch_find(key))

    async def stitch_find_many(self, keys: list[str]) -> list[str | None]:
        return await self._read("stitch", lambda s: s.stitch_find_many(keys))

    async def active_count(self) -> int:
        return await self._read("active_count", lambda s: s.active_count())

    async def ping(self) -> None:
        await self.primary.ping()

    async def unready(self) -> str | None:
        """Why this process cannot serve steps now (`/readyz`), or None. The process asks Redis
        (one PING; a store that does not answer opens the breaker, as a step would) rather than
        wait for a step to find out, so that `/readyz` shows the store's state on an idle
        process too. Only in `refuse` mode does an outage make it unready: there every step is
        refused; in `degrade` mode steps are served from memory."""
        if not self.degraded:
            with contextlib.suppress(StoreBusy, StoreReplyError):
                await self._try("ping", lambda s: s.ping())
        if self._mode != "refuse":
            return None
        if self.degraded:
            return "the shared trajectory store (Redis) is out and redis_failure is refuse: every step is refused"
        return None

    async def aclose(self) -> None:
        if self._recovery is not None:
            # Stop the probe first (one writer at a time), then one last try to write back what
            # the outage kept.
            self._recovery.cancel()
            await asyncio.gather(self._recovery, return_exceptions=True)
            if len(self.journal):
                with contextlib.suppress(Exception):
                    await self.primary.mark_write_back(self._write_back_mark_s)
                    await asyncio.wait_for(self.journal.write_back(self.primary), timeout=5)
        if self.journal_file is not None:
            await self.journal_file.aclose()  # synced, with a log line when writes remain in it
        elif len(self.journal):
            log.error(
                "stopping with %d write(s) of the outage not written back to the trajectory store: "
                "they are lost (set trajectories.outage_journal_dir to keep them on disk)",
                len(self.journal),
            )
        await self.primary.aclose()


def _cause(exc: BaseException) -> str:
    return "full" if isinstance(exc, redis.exceptions.OutOfMemoryError) else "read_only"
