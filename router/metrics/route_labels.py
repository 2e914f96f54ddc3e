"""What label values a route's steps can be recorded with, from its settings alone: the
reasons its strategy gives and the targets each can end on (the other one too when the route
fails over), the constraint and privacy reasons its settings make possible, the inner calls its
strategy and context setting make, what its privacy mode can do to a sensitive value.

`router.metrics.route_series` declares every series from these, so that each starts at zero. What is the
strategy's own (its reasons, inner calls and counted failures) its route settings say
(router/config/strategies.py); what is every route's (constraints, privacy, the header) is here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from router.config.privacy import blocks, can_keep_local, protects, redacts
from router.result import Reason

TARGETS = ("edge", "cloud")


def inner_calls(route: Any) -> set[tuple[str, str]]:
    """(purpose, target) of the inner calls the route's strategy and context setting make."""
    calls = {(purpose, str(target)) for purpose, target in route.inner_calls()}
    context = getattr(route, "context", None)
    if getattr(context, "mode", None) == "summary":
        calls.add(("summary", "edge"))
    return calls


def decisions(route: Any, header_forced: bool) -> Iterator[tuple[Reason, tuple[str, ...]]]:
    yield from route.reasons()
    fallback = getattr(route, "on_failure", None) or getattr(route, "fallback", None)
    if fallback in TARGETS:
        yield Reason.INNER_FAILED, (fallback,)
    if route.failure_kinds():
        # The engine's own fallback when a strategy let an inner call's failure through.
        yield Reason.INNER_FAILED, ("edge",)
    if header_forced:
        yield Reason.HEADER_FORCED, TARGETS
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
