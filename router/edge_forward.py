"""A step's main call to the edge when the edge is a pool of replicas (`upstreams.edge.endpoints`):
place it (router/edge/pool.py), keep the trajectory's home in its notes, and fail over from
replica to replica before the engine fails over to the cloud."""

from __future__ import annotations

from typing import TYPE_CHECKING

from router import notes
from router.config.base import public_url
from router.edge.pool import INVALID, EdgePool, Placement, Replica
from router.errors import GatewayError
from router.fault_log import FAULTS
from router.policies.base import Decision, Reason
from router.upstream import Upstream, UpstreamFailure, UpstreamReply

if TYPE_CHECKING:
    from router.metrics.core import Metrics
    from router.settings import Settings
    from router.step import Step
    from router.trajectory.store import TrajectoryStore
    from router.trajectory.tracker import StepIdentity


def build_pool(settings: Settings, first: Upstream, metrics: Metrics) -> EdgePool | None:
    """The edge's pool, or None when it is one base URL. The first replica is `first` (the
    upstream that probes and inner calls use); each other one gets its own transport."""
    edge = settings.upstreams["edge"]
    if not edge.endpoints:
        return None
    replicas: list[tuple[str, Upstream]] = []
    for url in edge.endpoints:
        if url == edge.base_url:
            upstream = first
        else:
            one = edge.model_copy(update={"base_url": url, "endpoints": []})
            upstream = Upstream("edge", one, settings.limits, metrics.limit_hit, on_call=metrics.calls_of("edge"))
        replicas.append((public_url(url), upstream))
    pool = edge.pool
    built = EdgePool(
        replicas,
        edge.balance,
        load_bound=pool.load_bound,
        home_bound=pool.home_bound,
        home_idle_s=pool.home_idle_s,
        rehome_after_s=pool.rehome_after_s,
        breaker_failures=pool.breaker_failures,
        breaker_s=pool.breaker_s,
        # Three reads missed: what the pool last read of a replica's queue no longer counts.
        stale_s=3 * pool.scrape_interval_s + 1.0,
    )
    failures = metrics.edge.replica_failures
    built.on_failed = lambda url, kind: failures.labels(url, kind).inc()
    return built


async def for_load(
    pool: EdgePool, step: Step, decision: Decision, cloud_allowed: bool, store: TrajectoryStore, metrics: Metrics
) -> Decision:
    """The decision once the edge's load is known: an edge step on a full pool goes to the
    cloud (`edge_full: cloud`, where nothing keeps it off the cloud), fails (`fail`), or
    queues at the edge (`wait`, and a step kept off the cloud)."""
    settings = step.route.settings
    if decision.target != "edge" or decision.answer is not None or settings.edge_full == "wait":
        return decision
    if not pool.full(settings.edge_full_waiting, settings.edge_full_wait_s):
        return decision
    if settings.edge_full == "fail":
        waits = "" if settings.edge_full_wait_s is None else f" or an estimated wait of {settings.edge_full_wait_s:g} s"
        raise GatewayError(
            503,
            f"the edge is full: every replica has {settings.edge_full_waiting} or more requests waiting{waits}, "
            f"and route {step.route.name!r} has edge_full: fail; retry later",
            type="server_error",
            code="edge_full",
            headers={"Retry-After": "1"},
        )
    if not cloud_allowed:
        return decision  # privacy, a constraint or the header wins: the step queues at the edge
    # Counted apart, so that a judge holding a cloud share does not take load for its own choice.
    trajectory = step.identity.trajectory
    spills = int(trajectory.notes.get(notes.POOL_SPILLS, "0") or 0) + 1
    await store.note(step.identity.trajectory_id, notes.POOL_SPILLS, str(spills))
    metrics.edge.load_spills.labels(step.route.name).inc()
    return Decision(target="cloud", reason=Reason.EDGE_FULL, score=decision.score, features=decision.features)


async def place_step(pool: EdgePool, identity: StepIdentity, store: TrajectoryStore, metrics: Metrics) -> Placement:
    """The step's placement, its trajectory's new home written where it has one. Two gateway
    replicas placing a new run's first steps at once agree on the home written first. Made
    before the step's decision, so that its inner edge calls (probe, draft) go home too."""
    trajectory_id = identity.trajectory_id
    home = identity.trajectory.notes.get(notes.POOL_HOME)
    placement = pool.place(trajectory_id, home)
    if placement.new_home is None:
        return placement
    if placement.rehomed is not None:
        metrics.edge.rehomes.labels(placement.rehomed).inc()
    kept = await store.note(trajectory_id, notes.POOL_HOME, placement.new_home, keep_first=home is None)
    winner = pool.by_url.get(kept)
    if winner is None or winner is placement.replicas[0] or winner not in placement.replicas:
        return placement
    pool.homed(trajectory_id, winner)  # another gateway process homed it first: count it there
    return Placement([winner, *[r for r in placement.replicas if r is not winner]], kept)


async def send_pooled(
    pool: EdgePool, step: Step, body: bytes, store: TrajectoryStore, metrics: Metrics
) -> UpstreamReply:
    """Send the step to its replicas in order until one answers; raise the last failure when
    none does (the engine then fails over to the cloud where the route allows it)."""
    placement = step.placement or await place_step(pool, step.identity, store, metrics)
    metrics.edge.replica_steps.labels(placement.replicas[0].url).inc()
    if placement.spilled:
        metrics.edge.home_spills.inc()
    last: UpstreamFailure | None = None
    failed: list[tuple[Replica, UpstreamFailure]] = []
    home_down = False  # the run's home refused or dropped the connection: it moves where answered
    home_invalid = False  # its home answered with no chat completion: it moves where one is
    for attempt, replica in enumerate(placement.replicas):
        if last is not None:
            # An earlier replica failed: counted here, as the engine counts the last one.
            FAULTS.call_failed(
                metrics.upstream_errors,
                "edge",
                last.kind,
                last.status,
                step.route.name,
                step.identity.trajectory_id,
                step.identity.step,
                "before its answer (trying the next replica)",
            )
            step.failures.append(("edge", last.kind, last.status))
        lease = pool.lease(replica, first=attempt == 0)
        try:
            reply = await replica.upstream.send(body, step.request.stream, trajectory_id=step.trajectory_id)
        except UpstreamFailure as failure:
            lease.release()
            pool.failed(replica, failure.kind, failure.status, failure.detail)
            last = failure
            failed.append((replica, failure))
            at_home = attempt == 0 and not placement.spilled
            home_down = home_down or (at_home and failure.kind in _DOWN)
            home_invalid = home_invalid or (at_home and failure.kind == INVALID)
            continue
        except BaseException:
            lease.release()
            raise
        if reply.status < 300:
            # A chat completion (or a stream that began as one) where earlier replicas answered
            # none: theirs was their own fault, not the request's (router/edge/pool.py, INVALID).
            for other, theirs in failed:
                if theirs.kind == INVALID:
                    pool.answered_instead(other)
        if home_down or (home_invalid and reply.status < 300):
            await _rehome(pool, step, placement, replica, store, metrics)
        if reply.stream is None:
            pool.answered(replica)
            lease.release()
        else:
            # Given back when the stream ends (router/answers.py), and only a stream answered
            # whole counts as the replica's success: one that drops every stream mid-answer
            # must reach its breaker.
            step.lease = lease
        return reply
    assert last is not None
    if len(pool.replicas) > 1:
        # The message says that the whole pool failed, not only what the last replica did: a
        # placement names every replica whose breaker lets steps through, so the others are out.
        raise UpstreamFailure(
            last.upstream,
            last.kind,
            _pool_failed(pool, placement, failed),
            status=last.status,
            body=last.body,
            content_type=last.content_type,
            retry_after=last.retry_after,
        )
    raise last


def _pool_failed(pool: EdgePool, placement: Placement, failed: list[tuple[Replica, UpstreamFailure]]) -> str:
    """What a step every replica failed says, whichever it tried last: that the whole pool
    failed, whether the pool is out (every breaker open; not so for a request that every replica
    refused), and each replica's last error (this step's where it was tried, else the one that
    took it out)."""
    now = pool.clock()
    out = placement.pool_out or not any(replica.alive(now) for replica in pool.replicas)
    now_failed = {replica: failure for replica, failure in failed}
    errors = []
    for replica in pool.replicas:
        failure = now_failed.get(replica)
        if failure is not None:
            errors.append(f"{replica.url}: {failure.kind}: {failure.detail}")
        else:
            why = "another step is trying it" if replica.trial else "its breaker is open"
            errors.append(f"{replica.url} (not tried: {why}): {replica.last_error or 'no failure seen here'}")
    said = "; the edge pool is out, every breaker open" if out else ""
    return f"every replica of the pool failed ({len(pool.replicas)}){said}; the last errors: {'; '.join(errors)}"


# A replica that refused the connection or dropped it: nothing answers there now. (A timeout or
# an error status may pass: the run keeps its home and its cache until the breaker opens.) An
# invalid answer moves the run too, but only where another replica answered the step with a chat
# completion (a client's bad request, invalid everywhere, moves nothing).
_DOWN = frozenset({"connect", "disconnected"})


async def _rehome(
    pool: EdgePool, step: Step, placement: Placement, replica: Replica, store: TrajectoryStore, metrics: Metrics
) -> None:
    """Move the run's home to `replica`, which answered the step its home could not: its next
    steps go there first, rather than to the dead home until the breaker opens (a run with a
    step or two left would never re-home)."""
    trajectory_id = step.identity.trajectory_id
    home = placement.new_home or step.identity.trajectory.notes.get(notes.POOL_HOME)
    if home != placement.replicas[0].url:
        return  # another gateway process homed it elsewhere, or it has none: nothing to move
    pool.homed(trajectory_id, replica)
    metrics.edge.rehomes.labels("replica_down").inc()
    await store.note(trajectory_id, notes.POOL_HOME, replica.url)
