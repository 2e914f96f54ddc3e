"""What label values a route's steps can be recorded with, from its settings alone: the
reasons its strategy gives and the targets each can end on (the other one too when the route
fails over), the constraint and privacy reasons its settings make possible, the inner calls its
strategy and context setting make, what its privacy mode can do to a sensitive value.

`router.route_series` declares every series from these, so that each starts at zero; a new
strategy adds its reasons and inner calls here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from router.config.privacy import blocks, can_keep_local, protects, redacts
from router.result import Reason

TARGETS = ("edge", "cloud")

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
# call that failed, `<purpose>_unreadable` when its answer could not be read; `inner_call` is
# what the engine counts when a strategy let an inner call's failure through.
POLICY_FAILURE_KINDS: dict[str, tuple[str, ...]] = {
    "entropy": ("probe", "probe_unreadable", "inner_call"),
    "llm_judge": ("judge", "judge_unreadable", "inner_call"),
    "draft_verify": ("draft", "verify", "verify_unreadable", "inner_call"),
    "self_delegation": ("edge", "inner_call"),
    "advisor": ("edge", "advisor", "inner_call"),
    "sketch": ("plan", "inner_call"),
    "escalation": ("edge", "inner_call"),
}


def inner_calls(route: Any) -> set[tuple[str, str]]:
    """(purpose, target) of the inner calls the route's strategy and context setting make."""
    strategy, calls = str(route.strategy), set()
    if strategy == "entropy":
        calls.add(("probe", "edge"))
    elif strategy == "llm_judge":
        calls.add(("judge", str(route.judge)))
    elif strategy == "draft_verify":
        calls |= {("draft", "edge"), ("verify", str(route.verifier))}
    elif strategy in ("self_delegation", "escalation"):
        calls.add(("edge", "edge"))
    elif strategy == "advisor":
        calls |= {("edge", "edge"), ("advisor", "cloud")}
    elif strategy == "sketch":
        calls.add(("plan", "cloud"))
    elif strategy == "judge" and getattr(route, "sees", None) == "draft":
        calls.add(("draft", "edge"))
    context = getattr(route, "context", None)
    if getattr(context, "mode", None) == "summary":
        calls.add(("summary", "edge"))
    return calls


def decisions(route: Any, header_forced: bool) -> Iterator[tuple[Reason, tuple[str, ...]]]:
    strategy = str(route.strategy)
    if strategy in ("edge", "cloud"):
        yield Reason.ROUTE_FIXED, (strategy,)
    yield from _STRATEGY_REASONS.get(strategy, ())
    fallback = getattr(route, "on_failure", None) or getattr(route, "fallback", None)
    if fallback in TARGETS:
        yield Reason.INNER_FAILED, (fallback,)
    if strategy in POLICY_FAILURE_KINDS:
        # The engine's own fallback when a strategy let an inner call's failure through.
        yield Reason.INNER_FAILED, ("edge",)
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
    if route.edge_full == "cloud":
        yield Reason.EDGE_FULL, ("cloud",)  # the edge pool was full


def step_labels(route: Any, header_forced: bool) -> set[tuple[str, str]]:
    """(target, reason) pairs the route's steps can be recorded with. A step that fails over
    keeps its reason and ends on the other target; steps kept local for privacy never do."""
    pairs: set[tuple[str, str]] = set()
    for reason, targets in decisions(route, header_forced):
        local_only = reason in (Reason.PRIVACY, Reason.PINNED)
        for target in targets:
            pairs.add((target, reason.value))
            if route.failover and not local_only:
                pairs.add(("cloud" if target == "edge" else "edge", reason.value))
    return pairs


def reachable_targets(route: Any, header_forced: bool) -> set[str]:
    return {target for target, _ in step_labels(route, header_forced)}


def reaches_cloud(route: Any, header_forced: bool) -> bool:
    """Whether any call of the route's steps may go to the cloud: the step or an inner call."""
    return "cloud" in reachable_targets(route, header_forced) or any(
        target == "cloud" for _, target in inner_calls(route)
    )


def privacy_actions(route: Any, header_forced: bool) -> tuple[str, ...]:
    """What can happen to a sensitive value on the route: every mode detects; `redact` redacts;
    `block` blocks; exposure is counted wherever the cloud may be asked, a protecting mode too
    (there it is a guard failure the critical alert must see from its first value)."""
    mode = str(route.privacy)
    actions = ["detected"]
    if redacts(mode):
        actions.append("redacted")
    if blocks(mode):
        actions.append("blocked")
    if reaches_cloud(route, header_forced):
        actions.append("exposed")
    return tuple(actions)
