"""The edge as a pool of replicas: which vLLM replica answers a step, in which order the others
are tried when it fails, and each replica's health (a breaker) and load (steps in flight).

A trajectory is kept on one replica, its home, because every step resends the run's growing
prefix and vLLM serves it from its prefix cache only where it computed it before. The home is
chosen by rendezvous hashing of the trajectory id (each replica's score is a hash of its URL
and the id; the highest score wins), which moves only the runs of a replica that goes away,
with two bounds ("consistent hashing with bounded loads"): a new home passes over a replica
holding more than `home_bound` × the mean of live homes (runs homed there, this run counted,
rounded up), then one holding more than `load_bound` × the mean of steps in flight. Steps in
flight alone let runs that start together crowd one replica (few steps are in flight between
them), hence the count of homes. The count is this gateway process's: the runs it placed or saw
a step of within `home_idle_s` (a run idle that long is forgotten); gateway processes do not
share it, each one's steps spread what it sees. The home itself is kept in the
trajectory's notes (`router.notes.POOL_HOME`), which every step's start reads already, so the
gateway's own replicas agree on it without another round trip. A run re-homes only when its
replica's breaker is open, the replica left the configuration, or the run's steps kept spilling
from it: `REHOME_AFTER_SPILLS` steps in a row, or for `rehome_after_s`, found it over the load
bound (counted per run, not per replica: a slow replica passes in and out of the bound from one
placement to the next, so "the replica stayed over it" never held while its runs were served
elsewhere step after step). A step that spills while its home is busy for a moment leaves the
home as it is.

A replica whose breaker's wait is over is tried by one step (half-open) while the others pass it
by. A run that starts meanwhile and whose home would be that replica is counted there but its
home is not written: its first step goes elsewhere, and its next step chooses again, homing it
there once the trial answered. Runs that start together as a replica comes back are then homed
on it (it holds the fewest), not all on the others for good.

`balance: least_loaded` and `round_robin` ignore homes (for comparison, and for edges whose
replicas share no cache). Every choice is a few dictionary reads and hashes: no I/O.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from router.upstream import Upstream

Balance = Literal["affinity", "least_loaded", "round_robin"]
# The failures that say at once that a replica is unwell (not a bad request, nor an answer too
# large; a status only from 500 up).
UNWELL = frozenset({"connect", "timeout", "disconnected", "status"})
# A 2xx that is no chat completion (an HTML page, an error object with status 200, a stream that
# begins with an error event) says so only once another replica answered the same call
# (`EdgePool.answered_instead`): on its own it may be the request's doing (vLLM streams some bad
# requests as an error event after a 200), and counted at once, one client's bad request, tried
# on each replica in turn, would open every breaker of the pool.
INVALID = "invalid_answer"
# Steps in a row that spilled from a run's busy home, after which the run moves (or after
# `rehome_after_s`): its prefix is cached where those steps went by then, less so at home.
REHOME_AFTER_SPILLS = 3


@dataclass(slots=True)
class ReplicaLoad:
    """What a replica's own `/metrics` said at the last scrape (router/edge/scrape.py)."""

    running: float = 0.0
    waiting: float = 0.0
    kv_cache_usage: float = 0.0  # 0..1
    prefix_hits: float = 0.0  # tokens served from the prefix cache, a counter
    prefix_queries: float = 0.0  # tokens looked up in it, a counter
    prefix_hit_ratio: float = 0.0  # hits / queries between the last two scrapes
    run_s_sum: float = 0.0  # seconds requests ran (prefill and decode), a counter
    run_s_count: float = 0.0  # requests that finished running, a counter
    run_s: float = 0.0  # mean seconds a request ran, of those that finished between the last two scrapes
    # Since when (monotonic) no request has finished while some waited: those running have run
    # at least that long, which the mean of the last finished ones does not know yet.
    stalled_since: float = 0.0
    at: float = 0.0  # monotonic time of the scrape; 0: never scraped

    @property
    def wait_s(self) -> float:
        """How long a request queued now would wait before it runs, estimated: the requests
        ahead of it × the time a request runs ÷ the requests run side by side. The time a
        request runs is the recent mean, or, when nothing has finished for longer while a queue
        stood, that long (requests grown longer than the last ones show first as a stall)."""
        stalled = self.at - self.stalled_since if self.stalled_since else 0.0
        return self.waiting * max(self.run_s, stalled) / max(self.running, 1.0)


@dataclass(slots=True, eq=False)
class Replica:
    """One vLLM server of the pool, with its own pooled transport."""

    url: str  # its base URL, without credentials: the label and the home note's value
    upstream: Upstream
    index: int
    in_flight: int = 0  # steps of this gateway process sent to it and not yet answered whole
    homes: int = 0  # live runs homed here, as this gateway process knows them
    chosen: int = 0  # steps sent to it first
    failures: int = 0  # consecutive unwell failures
    open_until: float = 0.0  # the breaker is open (the replica is skipped) until then
    # Its breaker's wait is over and one step is trying it (half-open): the others skip it until
    # that step ends, rather than each waiting out a replica that may still hang.
    trial: bool = False
    # Its last failure, "kind: detail", for the message of a step that every replica failed:
    # the replicas skipped with their breaker open say why they are out.
    last_error: str = ""
    load: ReplicaLoad = field(default_factory=ReplicaLoad)
    salt: bytes = b""

    def alive(self, now: float) -> bool:
        return now >= self.open_until and not self.trial

    def score(self, key: bytes) -> int:
        digest = hashlib.blake2b(key, digest_size=8, key=self.salt).digest()
        return int.from_bytes(digest, "big")


@dataclass(slots=True, eq=False)
class Lease:
    """A step's hold on a replica's in-flight count, given back once (its answer ended)."""

    replica: Replica
    pool: EdgePool
    released: bool = False

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.replica.in_flight -= 1
            # A trial that ended without a verdict (cancelled, a refused request): the next
            # step tries again.
            self.replica.trial = False

    def failed(self, kind: str) -> None:
        """The replica failed the step after its answer began (a dropped stream, one that went
        quiet): a failure as one before it is, for its breaker."""
        self.pool.failed(self.replica, kind, None)

    def answered(self) -> None:
        """The replica's stream ended whole: its breaker's count of failures starts again."""
        self.pool.answered(self.replica)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a step goes: replicas in the order to try, and the home to keep (None: unchanged)."""

    replicas: list[Replica]
    new_home: str | None = None
    spilled: bool = False  # the home was over the load bound: this step went elsewhere
    # Why a trajectory that had a home got a new one: replica_down, replica_removed, overloaded.
    rehomed: str | None = None
    # Every breaker is open: the one replica to try is the one out longest, and its failure is
    # the whole pool's.
    pool_out: bool = False
    # A new run whose home is to be a replica on trial: no home is written yet, its next step
    # chooses again (there, once the trial answered).
    home_pending: bool = False


@dataclass(slots=True, eq=False)
class _Home:
    """A live run as this gateway process counts it: its home, when a step of it was last
    placed, and the steps in a row that spilled from that home (since when)."""

    replica: Replica
    seen: float
    spills: int = 0
    spilled_since: float = 0.0


class EdgePool:
    """The edge's replicas and the rule that places a step on them."""

    def __init__(
        self,
        replicas: Sequence[tuple[str, Upstream]],
        balance: Balance = "affinity",
        *,
        load_bound: float = 1.25,
        home_bound: float = 1.0,
        home_idle_s: float = 600.0,
        rehome_after_s: float = 5.0,
        breaker_failures: int = 3,
        breaker_s: float = 10.0,
        stale_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.replicas = [
            Replica(url, upstream, index, salt=url.encode()[-64:]) for index, (url, upstream) in enumerate(replicas)
        ]
        self.by_url = {replica.url: replica for replica in self.replicas}
        self.balance = balance
        self.load_bound = load_bound
        self.home_bound = home_bound
        self.home_idle_s = home_idle_s
        # Trajectory id -> its home as counted here, the least recently placed first.
        self._homes: OrderedDict[str, _Home] = OrderedDict()
        self.rehome_after_s = rehome_after_s
        self.breaker_failures = breaker_failures
        self.breaker_s = breaker_s
        self.stale_s = stale_s  # a scraped load older than this says nothing
        # Told each failed call of a replica (its URL, the failure's kind): the gateway counts
        # them per replica (`tandem_edge_replica_failures_total`).
        self.on_failed: Callable[[str, str], None] = _nothing
        self.clock = clock
        self._turn = itertools.count()

    # -- placing a step ----------------------------------------------------------------------

    def place(self, trajectory_id: str, home: str | None) -> Placement:
        """The replicas to try for a step of `trajectory_id` whose home is `home` (None: new)."""
        now = self.clock()
        alive = [replica for replica in self.replicas if replica.alive(now)]
        if not alive:
            # Every breaker open: one replica is tried (the one out longest: it may be back), not
            # all of them, each waiting its first-byte timeout while the cloud could answer.
            out_longest = min(self.replicas, key=lambda replica: (replica.open_until, replica.index))
            return Placement([out_longest], pool_out=True)
        if self.balance == "round_robin":
            start = next(self._turn) % len(alive)
            return Placement(alive[start:] + alive[:start])
        loads = self._loads(alive, now)
        if self.balance == "least_loaded":
            return Placement(sorted(alive, key=lambda replica: (loads[replica], replica.index)))
        return self._affine(trajectory_id, home, alive, loads, now)

    def _loads(self, candidates: list[Replica], now: float) -> dict[Replica, float]:
        """Each replica's load: the steps this gateway has in flight there, plus the queue its
        metrics reported while that is recent (`stale_s`): an old reading (its metrics slow or
        failing since) says nothing of the queue now."""
        return {
            replica: replica.in_flight + (replica.load.waiting if now - replica.load.at <= self.stale_s else 0.0)
            for replica in candidates
        }

    def _affine(
        self, trajectory_id: str, home: str | None, candidates: list[Replica], loads: dict[Replica, float], now: float
    ) -> Placement:
        self._forget(now)
        key = trajectory_id.encode()
        ranked = sorted(candidates, key=lambda replica: replica.score(key), reverse=True)
        # Each replica may hold ceil(load_bound × the mean) steps, this one counted.
        bound = math.ceil(self.load_bound * (sum(loads.values()) + 1) / len(candidates))
        under = [replica for replica in ranked if loads[replica] + 1 <= bound] or ranked
        current = self.by_url.get(home) if home is not None else None
        homes_from, homes_under = ranked, under  # where a new home is chosen
        if current is not None and current in candidates:
            rest = [replica for replica in ranked if replica is not current]
            if loads[current] + 1 <= bound:
                # The count of homes never moves a run; a step at home ends a streak of spills.
                self.homed(trajectory_id, current, now)
                return Placement([current, *rest])
            if not self._spill_moves(trajectory_id, current, now):
                # Busy for a moment: this step spills, the run stays at home.
                first = under[0] if under[0] is not current else rest[0]
                return Placement([first, *[r for r in ranked if r is not first]], spilled=True)
            # Its steps kept spilling: a new home, not the busy one again (still tried last).
            homes_from, homes_under = rest, [replica for replica in under if replica is not current] or rest
        elif current is not None and current.trial:
            # Its home's breaker's wait is over and a step is trying it: the run keeps its home
            # (back in a moment, with the run's prefix cached) and this step goes elsewhere.
            self.homed(trajectory_id, current, now)
            return Placement([under[0], *[r for r in ranked if r is not under[0]]])
        elif home is None:
            trying = [replica for replica in self.replicas if replica.trial]
            if trying:
                pending = self._home_on_trial(trajectory_id, ranked, under, candidates, trying, key, now)
                if pending is not None:
                    return pending
        # New, or its home died, left, or kept spilling: a new home, under both bounds where one
        # is, else under the bound on homes (a burst of steps passes, a home stays).
        first = self._new_home(trajectory_id, homes_from, homes_under, candidates)
        self.homed(trajectory_id, first, now)
        why = None
        if home is not None:
            why = "replica_removed" if current is None else "overloaded" if current in candidates else "replica_down"
        return Placement([first, *[r for r in ranked if r is not first]], new_home=first.url, rehomed=why)

    def _spill_moves(self, trajectory_id: str, current: Replica, now: float) -> bool:
        """Whether a run whose home is over the load bound moves now (else this step spills,
        and is counted in the run's streak). It moves once `REHOME_AFTER_SPILLS` steps in a
        row spilled, or its first spill in a row was `rehome_after_s` ago (0: at once)."""
        known = self._homes.get(trajectory_id)
        if known is None or known.replica is not current:
            # Homed by another gateway process, or forgotten here: its streak starts now.
            self.homed(trajectory_id, current, now)
            known = self._homes[trajectory_id]
        else:
            known.seen = now
            self._homes.move_to_end(trajectory_id)
        since = known.spilled_since if known.spills else now
        if known.spills >= REHOME_AFTER_SPILLS or now - since >= self.rehome_after_s:
            return True
        known.spills += 1
        known.spilled_since = since
        return False

    def _home_on_trial(
        self,
        trajectory_id: str,
        ranked: list[Replica],
        under: list[Replica],
        candidates: list[Replica],
        trying: list[Replica],
        key: bytes,
        now: float,
    ) -> Placement | None:
        """A new run's placement while replicas are on trial (their breaker's wait over, one
        step trying them): with them counted, the home it would have; None where that is a
        live replica (placed as usual). Where it is one on trial, the run is counted there, so
        that runs starting together spread as if it were back, but its home is left unwritten
        and its step goes to a live replica; its next step chooses again, once the trial ended."""
        widened = sorted([*candidates, *trying], key=lambda replica: replica.score(key), reverse=True)
        # A replica on trial has only its trial step in flight: the load bound passes it.
        chosen = self._new_home(
            trajectory_id, widened, [r for r in widened if r.trial or r in under], [*candidates, *trying]
        )
        if not chosen.trial:
            return None
        self.homed(trajectory_id, chosen, now)
        return Placement([under[0], *[r for r in ranked if r is not under[0]]], home_pending=True)

    def _new_home(
        self, trajectory_id: str, ranked: list[Replica], under: list[Replica], candidates: list[Replica]
    ) -> Replica:
        known = self._homes.get(trajectory_id)
        mine = known.replica if known is not None else None  # this run's own count is not held against it

        def homes(replica: Replica) -> int:
            return replica.homes - (replica is mine)

        bound = math.ceil(self.home_bound * (sum(homes(r) for r in candidates) + 1) / len(candidates))
        for replica in under:
            if homes(replica) + 1 <= bound:
                return replica
        for replica in ranked:
            if homes(replica) + 1 <= bound:
                return replica
        return under[0]

    def homed(self, trajectory_id: str, replica: Replica, now: float | None = None) -> None:
        """Count `trajectory_id` as a live run homed on `replica` (moved there if it was
        elsewhere), its streak of spills ended."""
        known = self._homes.pop(trajectory_id, None)
        if known is not None:
            known.replica.homes -= 1
        replica.homes += 1
        self._homes[trajectory_id] = _Home(replica, self.clock() if now is None else now)

    def _forget(self, now: float) -> None:
        # Runs idle for home_idle_s ended or left: their homes stop counting. The least recent
        # come first, so this stops at the first live one (a few steps' work at most, amortised).
        homes = self._homes
        while homes:
            trajectory_id, known = next(iter(homes.items()))
            if now - known.seen < self.home_idle_s:
                return
            del homes[trajectory_id]
            known.replica.homes -= 1

    def full(self, max_waiting: int, max_wait_s: float | None = None) -> bool:
        """Whether every replica able to take a step is full: `max_waiting` or more requests
        waiting in its own queue, or (with `max_wait_s`) an estimated wait of that many seconds
        or more (its last scrape, if recent). A replica whose load is unknown, or whose breaker
        is open, makes no claim: with none known the pool is not full."""
        now = self.clock()
        known = False
        for replica in self.replicas:
            load = replica.load
            if not replica.alive(now) or now - load.at > self.stale_s:
                continue
            if load.waiting < max_waiting and (max_wait_s is None or load.wait_s < max_wait_s):
                return False
            known = True
        return known

    # -- what happened -----------------------------------------------------------------------

    def lease(self, replica: Replica, first: bool) -> Lease:
        replica.in_flight += 1
        if replica.open_until:
            replica.trial = True  # its breaker opened and its wait is over: this step tries it
        if first:
            replica.chosen += 1
        return Lease(replica, self)

    def answered(self, replica: Replica) -> None:
        replica.failures = 0
        replica.open_until = 0.0
        replica.trial = False

    def failed(self, replica: Replica, kind: str, status: int | None, detail: str = "") -> None:
        """Count a failure; past `breaker_failures` in a row the replica is skipped a while (a
        trial's failure too: it opens again at once). An invalid answer counts toward the
        breaker only through `answered_instead`."""
        self.on_failed(replica.url, kind)
        replica.last_error = f"{kind}: {detail}" if detail else kind
        if kind not in UNWELL or (kind == "status" and status is not None and status < 500):
            return
        self._strike(replica)

    def answered_instead(self, replica: Replica) -> None:
        """`replica` answered a call with something that is not a chat completion (counted by
        `failed`), and another replica then answered the same call with one: the fault is the
        replica's, not the request's, and it counts toward its breaker."""
        self._strike(replica)

    def _strike(self, replica: Replica) -> None:
        replica.failures += 1
        if replica.failures >= self.breaker_failures:
            replica.open_until = self.clock() + self.breaker_s
            replica.trial = False


def _nothing(url: str, kind: str) -> None:
    pass
