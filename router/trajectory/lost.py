"""Steps lost with their process: counted in the shared store, never recorded.

A step is counted when it begins (the trajectory's `steps`) and recorded when it ends. A worker
killed with steps in flight (SIGKILL, an OOM kill, a crash) takes them with it, and so does a
step whose start Redis ran after the gateway had refused it (Redis frozen or slow, in
`redis_failure: refuse` mode). Nothing else would ever record them: the ledger would say a run
had N steps with N-1 records, and the metrics (counted with each record) would stay one short.

The idle sweep (tracker.py) repairs them: a step counted with no record, once no step of its
trajectory can still be running, gets a record of its own, `lost_record`: status `error`, no
usage, no cost, answered by nobody, its `error` saying `lost`. It is added to the trajectory's
sums like any record (its `errors`) and counted in the metrics by the process that wrote it.

When it is safe to say so (`lost_after_s`): a step's start is at the latest the trajectory's
last step start, which Redis stamps on its own clock (`begun_at`, a write-back's start too); a
step still running is younger than the longest a step can run by the upstreams' timeouts. That
bound, or `trajectories.lost_step_after_s` when set, past the last step start of the run: a run
whose steps go on is repaired at its idle close, which is never sooner than
`trajectories.idle_close_s` after that start anyway. Nor within that bound after any replica
began writing an outage's journal back (resilient.py marks it): a step counted before the
outage may have its record in a journal.
"""

from __future__ import annotations

from router.ledger import StepRecord
from router.result import Reason
from router.settings import Settings

# What the record of a lost step says (`StepRecord.error`): its kind first, then why, in words
# a user of the trajectory API and the operator's view reads.
LOST_ERROR = (
    "lost: the step was counted but never recorded (the gateway process running it stopped, killed or out "
    "of memory, or its start reached Redis after the gateway had refused it); nothing is known of its answer, "
    "tokens or cost"
)
# The inner calls (probe, judge, draft, verify, edge answer, advisor, plan, summary) a step can
# make before its answer, at most: the strategies make one or two, a summarised context one more.
INNER_CALLS_MAX = 4
# Waits on the store a step can make (its start, stitching, vault, notes; each at most
# `redis_pool_wait_s`), and a margin for the clocks of Redis and the replicas.
STORE_WAITS = 6
MARGIN_S = 60.0


def longest_step_s(settings: Settings) -> float:
    """The longest a step can run by the settings' timeouts: each inner call and each upstream
    tried before the one that answers (every edge replica, then the cloud) waits at most for a
    connection and a first byte; the answer then streams for at most `timeouts.stream`, the
    client leaving it unread for at most `limits.send_timeout_s`; the store's waits besides."""
    timeouts = [upstream.timeouts for upstream in settings.upstreams.values()]
    before_answer = max(t.connect + t.first_byte for t in timeouts)
    answering = max(t.connect + t.first_byte + t.stream for t in timeouts) + settings.limits.send_timeout_s
    edge = settings.upstreams.get("edge")
    edge_tries = max(len(edge.endpoints), 1) if edge is not None else 1
    tried_before = INNER_CALLS_MAX + edge_tries + 1
    return tried_before * before_answer + answering + STORE_WAITS * settings.redis_pool_wait_s + MARGIN_S


def lost_after_s(settings: Settings) -> float:
    """Seconds after a trajectory's last step start past which its steps without a record are
    lost: `trajectories.lost_step_after_s`, or `longest_step_s`."""
    configured = settings.trajectories.lost_step_after_s
    return configured if configured is not None else longest_step_s(settings)


def lost_record(trajectory_id: str, step: int, route: str, at: float) -> StepRecord:
    """The record of a lost step. `route`: the trajectory's (its first step's: the lost step's
    own is not known); `at`: the trajectory's last step start, the latest the step can have
    begun. No decision is known (`undecided`), nor a target (`none`), a model or an HTTP status
    (0: the client got none from this step, or a refusal of it that was not this start)."""
    return StepRecord(
        trajectory_id=trajectory_id,
        step=step,
        route=route,
        target="none",
        reason=Reason.UNDECIDED.value,
        score=None,
        model="",
        at=at,
        status="error",
        http_status=0,
        error=LOST_ERROR,
    )
