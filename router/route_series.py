"""The label sets each configured route can emit, so that the gateway starts their series at
zero (a panel then shows 0, not "No data", and `increase()` counts a series' first event).

Only what a route can emit: the reasons its strategy gives, with the targets each can end on
(the other one too when the route fails over), the constraint and privacy reasons its settings
make possible, and the inner-call failures its strategy counts. Nothing for routes that cannot
produce it, so that a 100-route gateway does not expose thousands of idle series.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from router.policies.base import Reason
from router.privacy.modes import can_keep_local, protects

if TYPE_CHECKING:
    from router.metrics import Metrics

TARGETS = ("edge", "cloud")
TOKEN_KINDS = ("prompt", "cached", "completion")
FAILURE_KINDS = ("connect", "timeout", "disconnected", "status", "invalid_answer")
CLOSE_REASONS = ("outcome", "idle")
# The Redis store's operations (router/trajectory/resilient.py), each of which can fail.
STORE_OPERATIONS = (
    "active_count",
    "begin_step",
    "close",
    "get",
    "idle",
    "note",
    "recent",
    "record",
    "records",
    "set_outcome",
    "stitch",
)
# Why a process switched to its write-back journal (router/trajectory/resilient.py).
STORE_OUTAGE_CAUSES = ("unreachable", "full", "read_only")

# strategy -> (reason, targets that reason can choose); `on_failure`/`fallback` is read from
# the route's settings where the strategy has one.
_BOTH = ("edge", "cloud")
_STRATEGY_REASONS: dict[str, tuple[tuple[Reason, tuple[str, ...]], ...]] = {
    "random": ((Reason.RANDOM_DRAW, _BOTH),),
    "task": ((Reason.TASK_ROUTED, _BOTH),),
    "entropy": ((Reason.ENTROPY, _BOTH),),
    "llm_judge": ((Reason.LLM_JUDGE, _BOTH),),
    "judge": ((Reason.JUDGE, _BOTH),),
    "draft_verify": (
        (Reason.DRAFT_ACCEPTED, ("edge",)),
        (Reason.DRAFT_REJECTED, ("cloud",)),
        (Reason.INNER_FAILED, ("cloud",)),
    ),
    "self_delegation": (
        (Reason.SELF_DELEGATED, ("cloud",)),
        (Reason.EDGE_ANSWERED, ("edge",)),
        (Reason.INNER_FAILED, ("cloud",)),
    ),
    "advisor": ((Reason.EDGE_ANSWERED, ("edge",)), (Reason.ADVISED, ("edge",)), (Reason.INNER_FAILED, ("edge",))),
    "sketch": ((Reason.SKETCH, ("edge",)),),
    "escalation": (
        (Reason.FAILING, ("cloud",)),
        (Reason.INVALID_TOOL_CALL, ("cloud",)),
        (Reason.EDGE_ANSWERED, ("edge",)),
        (Reason.INNER_FAILED, ("cloud",)),
    ),
}

# strategy -> the `kind`s of tandem_policy_failures_total it counts: the purpose of the inner
# call that failed, `<purpose>_unreadable` when its answer could not be read.
POLICY_FAILURE_KINDS: dict[str, tuple[str, ...]] = {
    "entropy": ("probe", "probe_unreadable"),
    "llm_judge": ("judge", "judge_unreadable"),
    "draft_verify": ("draft", "verify", "verify_unreadable"),
    "self_delegation": ("edge",),
    "advisor": ("edge", "advisor"),
    "sketch": ("plan",),
    "escalation": ("edge",),
}


def _decisions(route: Any, header_forced: bool) -> Iterator[tuple[Reason, tuple[str, ...]]]:
    strategy = str(route.strategy)
    if strategy in ("edge", "cloud"):
        yield Reason.ROUTE_FIXED, (strategy,)
    yield from _STRATEGY_REASONS.get(strategy, ())
    fallback = getattr(route, "on_failure", None) or getattr(route, "fallback", None)
    if fallback in TARGETS:
        yield Reason.INNER_FAILED, (fallback,)
    if header_forced:
        yield Reason.HEADER_FORCED, _BOTH
    constraints = route.constraints
    if constraints.budget_usd is not None or constraints.budget_calls is not None:
        yield Reason.BUDGET, ("edge",)
    if constraints.max_cloud_share is not None:
        yield Reason.MAX_SHARE, ("edge",)
    if constraints.min_cloud_gap is not None:
        yield Reason.MIN_GAP, ("edge",)
    if can_keep_local(route.privacy):
        yield Reason.PRIVACY, ("edge",)
    # Pinned by a step kept local (`pin_when_sensitive`), or, on any protecting mode, by a store
    # outage that leaves the trajectory's state unknown (router/trajectory/tracker.fail_closed).
    if protects(route.privacy):
        yield Reason.PINNED, ("edge",)


def step_labels(route: Any, header_forced: bool) -> set[tuple[str, str]]:
    """(target, reason) pairs the route's steps can be recorded with. A step that fails over
    keeps its reason and ends on the other target; steps kept local for privacy never do."""
    pairs: set[tuple[str, str]] = set()
    for reason, targets in _decisions(route, header_forced):
        local_only = reason in (Reason.PRIVACY, Reason.PINNED)
        for target in targets:
            pairs.add((target, reason.value))
            if route.failover and not local_only:
                pairs.add(("cloud" if target == "edge" else "edge", reason.value))
    return pairs


def reachable_targets(route: Any, header_forced: bool) -> set[str]:
    return {target for target, _ in step_labels(route, header_forced)}


def start_route_series(metrics: Metrics, name: str, route: Any, header_forced: bool) -> None:
    """Start at zero the series route `name` can emit."""
    for target, reason in step_labels(route, header_forced):
        metrics.steps.labels(name, target, reason, "ok")
    targets = reachable_targets(route, header_forced)
    for target in targets:
        metrics.cost.labels(name, target, "step")
        for kind in TOKEN_KINDS:
            metrics.tokens.labels(name, target, kind, "step")
    metrics.counterfactual_cost.labels(name)
    if route.failover and len(targets) == 2:
        for source in TARGETS:
            for kind in FAILURE_KINDS:
                metrics.fallbacks.labels(name, source, "cloud" if source == "edge" else "edge", kind)
    for kind in POLICY_FAILURE_KINDS.get(str(route.strategy), ()):
        metrics.policy_failures.labels(name, kind)
    for reason in CLOSE_REASONS:
        metrics.trajectories_closed.labels(reason, name)
    for histogram in (
        metrics.run_steps,
        metrics.run_cost,
        metrics.run_cloud_share,
        metrics.run_savings,
        metrics.run_loss,
        metrics.run_privacy,
    ):
        histogram.labels(name)
    if getattr(route, "shadow", None) is not None:
        for target in TARGETS:
            for outcome in ("agree", "disagree", "failed"):
                metrics.shadow_calls.labels(name, target, outcome)
    if route.strategy == "judge":
        metrics.judge_score.labels(name)
        for kind in ("score", "reload"):
            metrics.judge_failures.labels(kind)
