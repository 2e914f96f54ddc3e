"""Trajectory bookkeeping for the pipeline: identify a request's trajectory, count its step,
record the step off the request path, and close idle trajectories once.

What privacy decides of a run (whether its route protects values, the task as kept, the score at
close) is asked of the `RunPrivacy` it is given (router/privacy/runs.py), so that trajectories
sit below privacy and never import it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Mapping
from typing import Any, Protocol

from router import notes
from router.clock import SYSTEM_CLOCK, Clock
from router.config.routes import RouteBase
from router.errors import GatewayError
from router.ledger import StepRecord
from router.metrics.core import Metrics
from router.protocol.chat import ChatRequest
from router.protocol.text import last_action, new_tool_results
from router.quota import (
    ClientLimits,
    Limit,
    Reservation,
    requested_max_tokens,
    reservation_usd,
)
from router.records import record
from router.settings import Settings
from router.trajectory import identify
from router.trajectory.amend import Amendable
from router.trajectory.children import CHILD_NOTE, PARENT_NOTE, Children, stitched_family
from router.trajectory.continued import Continuable
from router.trajectory.eager import Background
from router.trajectory.identify import namespace_of
from router.trajectory.journal_file import JournalFile
from router.trajectory.lost import lost_after_s, lost_record
from router.trajectory.recorder import Recorder
from router.trajectory.redis_store import RedisStore
from router.trajectory.resilient import ResilientStore
from router.trajectory.state import StepSlot, StepStart, Trajectory
from router.trajectory.stitch import NEW, RETRY, Stitch, Stitcher
from router.trajectory.store import MemoryStore, StoreUnavailable, TrajectoryStore

log = logging.getLogger("tandem.trajectory")
# Lost steps' records whose write failed (a reply lost), kept to be sent again: at most this many.
MAX_UNSURE_LOST = 10_000


class RunPrivacy(Protocol):
    """What the tracker asks of the privacy policy about a run, by its route's name."""

    def protects(self, route: str) -> bool:
        """Whether the route protects sensitive values (every privacy mode but allow)."""
        ...

    def stored_task(self, messages: list[dict[str, Any]], route: str) -> str:
        """The run's task as its trajectory keeps it (with placeholders where the route protects)."""
        ...

    async def score(self, store: TrajectoryStore, trajectory: Trajectory) -> float:
        """The privacy score of a closed trajectory (what its vault holds, weighted)."""
        ...


# The action of an amended request's dropped answer: no command a rule could read, so its
# failure is told by its harness's own words (judge/status.py), as a plain chat's tool's is.
_DROPPED_ACTION: dict[str, Any] = {"role": "assistant", "content": ""}


@record(frozen=True, slots=True)
class StepIdentity:
    trajectory_id: str
    step: int
    attempt: int
    # The tool results (and user turns) after the last assistant message: what is new. Their
    # error signals go in the step's record, read off the answer's path (`Step.signals`).
    results: list[str]
    trajectory: Trajectory  # as it stood before this step
    stitch_key: str | None = None  # the history key when stitched (no session id)
    # The cloud dollars the step holds against its key's limit until its record settles them.
    reservation: Reservation | None = None
    # How a stitched step found its trajectory (`stitch.EXTENDED`, …), and its first message's key.
    stitch: str | None = None
    stitch_anchor: str = ""
    # The previous step's action (the latest assistant message), whose results are `results`:
    # with them, whether that action failed (judge/status.py), read off the answer's path.
    action: dict[str, Any] | None = None
    family: str = ""  # where the sub-agents its answer starts are remembered (children.py)
    counted_apart: bool = False  # counted during a shared-store outage (`StepSlot.counted_apart`)
    # What a later request amending its last message finds this step by (stitch.py, amend.py).
    stitch_amend: Amendable | None = None
    stitch_space: str = ""  # its stitching space's key (`Stitch.space`)
    # What a later request writing its answer into its last message finds it by (continued.py).
    stitch_continued: Continuable | None = None


def build_store(settings: Settings, metrics: Metrics, journal_key: bytes | None = None) -> TrajectoryStore:
    trajectories = settings.trajectories
    if settings.redis_url is None:
        return MemoryStore(
            trajectories.max_in_memory,
            trajectories.ttl_s,
            record_bytes=trajectories.record_bytes,
            trajectory_record_bytes=trajectories.trajectory_record_bytes,
        )
    primary = RedisStore(
        settings.redis_url,
        settings.redis_prefix,
        trajectories.ttl_s,
        timeout_s=settings.redis_timeout_s,
        max_recent=trajectories.max_listed,
        pool_size=settings.redis_pool_size,
        pool_wait_s=settings.redis_pool_wait_s,
    )
    # The mirror of Redis keeps totals, notes and pins (what an outage needs), not records.
    mirror = MemoryStore(trajectories.max_in_memory, trajectories.ttl_s, keep_records=False)
    journal_file = None
    if trajectories.outage_journal_dir is not None and journal_key is not None:
        journal_file = JournalFile(
            trajectories.outage_journal_dir,
            journal_key,
            trajectories.outage_journal_max_bytes,
            trajectories.outage_journal_sync_ms / 1000,
            on_lost=lambda reason, count: metrics.journal_lost.labels(reason).inc(count),
        )
    return ResilientStore(
        primary,
        mirror,
        settings.redis_failure,
        metrics,
        journal_max=trajectories.outage_journal_max,
        journal_file=journal_file,
        write_back_mark_s=lost_after_s(settings),
    )


def fail_closed(slot: StepSlot, trajectory_id: str, protected: bool) -> Trajectory:
    """The trajectory as the step sees it (a new one when a store returned none). Counted
    during an outage with nothing known of it (another replica may have pinned it to the
    edge), a route that protects values (`protected`) treats it as pinned."""
    trajectory = slot.trajectory or Trajectory(id=trajectory_id, steps=slot.step)
    if not slot.state_unknown or not protected:
        return trajectory
    trajectory.notes[notes.PIN] = "edge"
    return trajectory


def build_limits(settings: Settings, metrics: Metrics, store: TrajectoryStore) -> ClientLimits | None:
    """The per-key limits, shared through Redis when the store uses it; None when there are none."""
    config = settings.client_limits
    default = Limit(config.requests_per_minute, config.cloud_usd_per_day)
    keys = settings.client_keys()
    per_namespace = {}
    for name, override in config.keys.items():
        given = override.model_fields_set
        per_namespace[namespace_of(name) if name in keys else name] = Limit(
            override.requests_per_minute if "requests_per_minute" in given else default.requests_per_minute,
            override.cloud_usd_per_day if "cloud_usd_per_day" in given else default.cloud_usd_per_day,
        )
    shared = store if isinstance(store, ResilientStore) else None
    limits = ClientLimits(
        default,
        per_namespace,
        metrics,
        shared.primary.client if shared else None,
        settings.redis_prefix,
        shared_ok=(lambda: not shared.degraded) if shared else (lambda: False),
    )
    return limits if limits.active else None


def may_spend_on_cloud(route: RouteBase) -> bool:
    """Whether a step of the route can cost cloud dollars: sent there by its strategy or a
    failover, or an inner call made there (an LLM judge, a verifier)."""
    return route.sends_to_cloud() or route.failover or "cloud" in route.upstreams_used()


class Tracker:
    def __init__(
        self,
        settings: Settings,
        metrics: Metrics,
        privacy: RunPrivacy,
        clock: Clock = SYSTEM_CLOCK,
        journal_key: bytes | None = None,
    ) -> None:
        self._settings = settings.trajectories
        self._privacy = privacy
        self._retry_after = str(settings.retry_after_s)
        self._metrics = metrics
        # Where the idle sweep reads the time and waits (a test's clock moves it by hand).
        self.clock = clock
        # `journal_key`: seals the outage journal on disk (derived from the vault's key).
        self.store = build_store(settings, metrics, journal_key)
        self.recorder = Recorder(self.store, metrics.steps_written)
        self.limits = build_limits(settings, metrics, self.store)
        # What a step's hold of cloud dollars is reckoned from (router/quota.py).
        self._cloud_prices = settings.upstreams["cloud"].prices
        self._reserve_output_tokens = settings.client_limits.reserve_output_tokens
        self._may_spend = frozenset(name for name, route in settings.routes.items() if may_spend_on_cloud(route))
        # Off-path work starts eagerly only when every store is in process: a Redis command
        # enters `asyncio.timeout`, which would time (and on expiry cancel) the request's task.
        self.background = Background(eager=isinstance(self.store, MemoryStore))
        self.stitcher = Stitcher(self.store, self.background)
        self.children = Children()  # the sub-agents this process's answers started
        self._sweeper: asyncio.Task[None] | None = None
        # How long after a trajectory's last step start a step without a record is lost (lost.py).
        self._lost_after_s = lost_after_s(settings)
        # Lost steps' records (and their tokens) whose write failed: sent again at the next sweep.
        self._unsure_lost: list[tuple[StepRecord, str]] = []

    async def start(self) -> None:
        if isinstance(self.store, ResilientStore):
            await self.store.start()  # what an earlier run kept on disk, written back first
        self.recorder.start()
        self._sweeper = asyncio.create_task(self._sweep(), name="tandem-idle-sweep")

    async def aclose(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        await self.background.settled()
        await self.recorder.aclose()
        await self.store.aclose()

    async def begin(
        self,
        request: ChatRequest,
        headers: Mapping[str, str],
        path_session: str | None,
        namespace: str,
        route: str,
    ) -> StepIdentity:
        reservation = await self._admit(request, namespace, route)
        try:
            retry = identify.is_client_retry(headers)
            trajectory_id, stitched = await self._identify(request, headers, path_session, namespace, retry)
            if stitched is not None:
                # A stitched step is an attempt of the step before it exactly when the stitcher
                # took it for one (`x-tandem-stitch: retry`): a retry that changed a field
                # other than the messages (a lower `max_tokens`) is still that step, and a
                # retry header on a history no attempt was seen with (refused before it was
                # stitched: a rate limit) is a new step, not another attempt of the last one.
                retry = stitched.decision == RETRY
            # A sub-agent: of a run named by its session, any request of that session; of a
            # stitched run, a new stitched run (linked once, then stitched as any run).
            family = trajectory_id if stitched is None else stitched_family(namespace)
            child = None
            thread = self._thread(headers, path_session, request, namespace) if stitched is None else None
            if thread is not None:
                trajectory_id, parent = thread  # a sub-agent the client names: its own trajectory
                spawn_step = self.children.thread_spawn_step(parent)
                child = (trajectory_id, parent, -1 if spawn_step is None else spawn_step)
            elif stitched is None or stitched.decision == NEW:
                child = self.children.child_of(family, request.messages, claim=stitched is not None)
                if child is None and stitched is None:
                    child = self._cache_child(namespace, request, trajectory_id)
            if child is not None and stitched is None:
                trajectory_id = child[0]  # a sub-agent's request: its own trajectory
            start = StepStart(
                trajectory_id=trajectory_id,
                fingerprint=identify.fingerprint(request.encoded()),
                retry=retry,
                task=self._task(trajectory_id, request, route),
                route=route,
                namespace=namespace,
                at=self.clock.time(),
                # A UUID object cost ~1% of a step at saturation, a system call a step less.
                token=identify.random_hex(16),
            )
            slot = await self.store.begin_step(start)
        except BaseException as exc:
            if reservation is not None and self.limits is not None:
                self.spawn(self.limits.settle(reservation, 0.0))  # no step: nothing spent
            if not isinstance(exc, StoreUnavailable):
                raise
            raise GatewayError(
                503,
                f"{exc}; the gateway is configured to refuse steps until it is back",
                type="server_error",
                code="store_unavailable",
                headers={"Retry-After": self._retry_after},
            ) from exc
        if child is not None and slot.step == 1 and slot.attempt == 1:
            self.spawn(self._link(child[1], trajectory_id, child[2]))
        results = new_tool_results(request.messages)
        action = last_action(request.messages)
        if stitched is not None and stitched.appended is not None:
            # An amended last message (amend.py): what is new is the text appended, the result
            # of an answer the client dropped from its history (its action unknown here).
            results, action = [stitched.appended], _DROPPED_ACTION
        trajectory = fail_closed(slot, trajectory_id, self._privacy.protects(route))
        return StepIdentity(
            trajectory_id,
            slot.step,
            slot.attempt,
            results,
            trajectory,
            stitched.key if stitched else None,
            reservation,
            stitched.decision if stitched else None,
            stitched.anchor if stitched else "",
            action,
            family,
            slot.counted_apart,
            stitched.amend if stitched else None,
            stitched.space if stitched else "",
            stitched.continued if stitched else None,
        )

    async def _admit(self, request: ChatRequest, namespace: str, route: str) -> Reservation | None:
        """Count the step against its key's limits, holding its estimated cloud cost when its
        route may spend on the cloud (its strategy, a failover or an inner call)."""
        if self.limits is None:
            return None
        hold = 0.0
        if route in self._may_spend:
            max_tokens = requested_max_tokens(request.raw)
            hold = reservation_usd(request.size, max_tokens, self._reserve_output_tokens, self._cloud_prices)
        return await self.limits.admit(namespace, hold)

    def release(self, identity: StepIdentity) -> None:
        """The step can no longer reach the cloud: its hold goes back now, not at its record."""
        if identity.reservation is not None and self.limits is not None:
            self.spawn(self.limits.release(identity.reservation))

    def _task(self, trajectory_id: str, request: ChatRequest, route: str) -> str:
        """The task a trajectory keeps from its first step, with placeholders for the values a
        sensitive route's policy protects (at_rest.py). Stores read it only when the trajectory
        is new: one the memory store holds already is spared finding it (a shared store decides
        in its own script, so it is always sent there)."""
        if isinstance(self.store, MemoryStore) and self.store.knows(trajectory_id):
            return ""
        return self._privacy.stored_task(request.messages, route)

    async def _identify(
        self, request: ChatRequest, headers: Mapping[str, str], path_session: str | None, namespace: str, retry: bool
    ) -> tuple[str, Stitch | None]:
        said = request.raw if request.said is None else request.said
        session = identify.session_id(path_session, headers, said)
        if session is not None:
            return identify.trajectory_id(namespace, session), None
        if not self._settings.stitch_by_history:
            return identify.new_trajectory_id(namespace), None
        # The request as the client sent it (the privacy stage redacts later): a redacted `user`
        # still scopes its run.
        scope = identify.client_scope(said)
        stops = identify.stop_strings(request.raw)
        stitched = await self.stitcher.place(namespace, request.messages, retry, scope, stops)
        return stitched.trajectory_id, stitched

    def answered(self, identity: StepIdentity, status: str, answer_key: str | None, acted: bool = False) -> None:
        """A stitched step's answer went out (or failed): see `Stitcher.answered`. `answer_key`:
        the answer's `identify.answer_key` (None when there is no answer); `acted`: whether it
        called tools (only such an answer can be dropped for a call that raised, amend.py)."""
        if identity.stitch_key is not None:
            stitcher, key = self.stitcher, identity.stitch_key
            amendable = identity.stitch_amend if acted else None
            # An answer that called tools is noted in its space too: a handoff's next step,
            # under another first message, resends those calls (`Stitcher._find`); so is an
            # answer of fields, which a rebuilt prompt lists (`identify.transcript_keys`).
            fields = answer_key is not None and identify.FIELDS in answer_key
            space = identity.stitch_space if acted or fields else ""
            # A text answer may be written into the client's next prompt (continued.py).
            goes_on = identity.stitch_continued if not acted else None
            work = stitcher.note_answer(
                identity.trajectory_id, key, status, answer_key or "", identity.stitch_anchor, amendable, space, goes_on
            )
            self.spawn(work)

    def _thread(
        self, headers: Mapping[str, str], path_session: str | None, request: ChatRequest, namespace: str
    ) -> tuple[str, str] | None:
        """A spawned thread's trajectory and its parent's, where the client names both (Codex):
        within the run its session names (the path's, else the client's own)."""
        spawned = identify.spawned_thread(headers)
        if spawned is None:
            return None
        said = request.raw if request.said is None else request.said
        session = path_session or identify.session_id(None, headers, said)
        if session is None:
            return None
        return identify.thread_trajectories(namespace, session, *spawned)

    def _cache_child(self, namespace: str, request: ChatRequest, trajectory_id: str) -> tuple[str, str, int] | None:
        """A sub-agent with its own session whose cache key names its parent (OpenHands' Task
        tool): linked when an answer of the parent started its prompt; it keeps its own id."""
        if not self.children.any_prompt():
            return None  # most gateways: no answer started one, no key to read
        parent = identify.cache_parent(namespace, request.raw, trajectory_id)
        found = None if parent is None else self.children.child_of(parent, request.messages)
        return None if found is None else (trajectory_id, found[1], found[2])

    async def _link(self, parent: str, child: str, parent_step: int) -> None:
        """A child trajectory's notes: its parent's id and step (-1: the parent's latest step
        as the child begins), and the child on the parent."""
        if parent_step < 0:
            found = await self.store.get(parent)
            parent_step = found.steps if found is not None else 0
        await self.store.note(child, PARENT_NOTE, f"{parent} {parent_step}", keep_first=True)
        await self.store.note(parent, CHILD_NOTE + child, str(parent_step), keep_first=True)

    def spawned(self, identity: StepIdentity, calls: list[identify.Call]) -> None:
        """A step's answer was delivered with these tool calls: the sub-agents it starts."""
        if calls:
            self.children.spawned(identity.family, identity.trajectory_id, identity.step, calls)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run store work off the request path, in a task awaited at shutdown; with the memory
        store, started at once (it does not wait: no task at all)."""
        self.background.spawn(work)

    def record(
        self,
        record: StepRecord,
        results: list[str] | None = None,
        reservation: Reservation | None = None,
        action: dict[str, Any] | None = None,
    ) -> int:
        """Write the step's record off the request path; `results`: the step's new tool results,
        whose error signals the recorder reads into it first; `reservation`: the step's hold of
        cloud dollars, settled with what the step cost; `action`: the previous step's action, whose
        results `results` are (`StepRecord.failed_before`). Returns its ticket for `kept`."""
        ticket = self.recorder.submit(record, results, action)
        if self.limits is not None and reservation is not None:
            self.spawn(self.limits.settle(reservation, record.cloud_spend_usd))
        return ticket

    async def kept(self, ticket: int) -> None:
        """Before an answer goes out during a store outage, with the journal on disk: wait until
        the step's record (ticket) is in the journal file and synced. At once otherwise."""
        store = self.store
        if not isinstance(store, ResilientStore) or store.journal_file is None or not store.degraded:
            return
        await self.recorder.handed(ticket)
        await store.durable()

    async def close(self, trajectory_id: str, reason: str) -> Trajectory | None:
        """Close once; the per-run figures are recorded by the call that closed it."""
        await self.recorder.flush()
        trajectory = await self.store.close(trajectory_id, reason, self.clock.time())
        if trajectory is not None:
            self._metrics.trajectory_closed(trajectory, await self._privacy.score(self.store, trajectory))
        return trajectory

    async def _sweep(self) -> None:
        interval = min(self._settings.idle_close_s / 4, 30.0)
        while True:
            await self.clock.sleep(interval)
            with contextlib.suppress(Exception):
                await self.sweep_once()

    async def sweep_once(self) -> int:
        if isinstance(self.store, ResilientStore) and self.store.degraded:
            # During an outage this replica's view of when a trajectory last moved may be stale
            # (another replica may be serving it): close nothing until the store is back.
            return 0
        closed = 0
        if self._unsure_lost:
            unsure, self._unsure_lost = self._unsure_lost, []
            await self._write_lost([record for record, _ in unsure], [token for _, token in unsure])
        idle = await self.store.idle(self.clock.time() - self._settings.idle_close_s, 500)
        if idle:
            await self.recorder.flush()  # this process's records first: their steps are not lost
        for trajectory_id in idle:
            if not await self._repair_lost(trajectory_id):
                continue  # a step of it may still be running: it is not idle yet
            if await self.close(trajectory_id, "idle") is not None:
                closed += 1
        return closed

    async def _repair_lost(self, trajectory_id: str) -> bool:
        """Record the trajectory's lost steps (lost.py: counted with no record, and older than
        any step could still be running); whether it may close now. False while one of its
        steps without a record may still be running: closed then, its per-run figures would
        miss that step's record."""
        found = await self.store.lost_steps(trajectory_id, self._lost_after_s)
        if found.wait_s > 0:
            return False
        if found.steps:
            records = [lost_record(trajectory_id, step, found.route, found.at) for step in found.steps]
            await self._write_lost(records, [identify.random_hex(16) for _ in records])
            log.warning(
                "trajectory %s: step(s) %s were counted but never recorded (a worker killed with them in "
                "flight, or a start Redis ran after it was refused): recorded lost",
                trajectory_id,
                ", ".join(str(step) for step in found.steps),
            )
        return not found.more

    async def _write_lost(self, records: list[StepRecord], tokens: list[str]) -> None:
        """Write lost steps' records and count in the metrics those this call wrote (another
        replica's sweep may have written one first, or the step's own record come)."""
        try:
            written = await self.store.record_lost(records, tokens)
        except BaseException:
            # Whether the store wrote them is not known (its reply may be what was lost): sent
            # again with the same tokens at the next sweep, whose answer says, so that each is
            # written once and counted once.
            self._unsure_lost = [*self._unsure_lost, *zip(records, tokens, strict=True)][-MAX_UNSURE_LOST:]
            raise
        self._metrics.steps_lost([record for record, wrote in zip(records, written, strict=True) if wrote])
