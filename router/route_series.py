"""Every series the gateway can emit, declared per metric, so that all of them start at zero.

A counter born at its first event hides that event from `increase()` and `rate()`: the first
leak of a kind on a route would never fire the privacy alert, and a panel would show "No data"
rather than 0. So every labelled counter and histogram has an entry in `SERIES`: a function
that lists the label values it can be emitted with, for a gateway's settings (`SeriesScope`).
`start_series` creates each of them at start-up, and tests/deploy/test_series.py checks, for
every declared metric, that a real gateway's /metrics shows every combination at zero, and
that a metric without an entry fails: series that later work adds inherit the rule.

Only what a route can emit: the reasons its strategy gives, with the targets each can end on
(the other one too when the route fails over), the constraint and privacy reasons its settings
make possible, the inner calls its strategy makes, the privacy actions its mode takes. Nothing
for routes that cannot produce it, so that a 100-route gateway does not expose thousands of
idle series. Gauges are set, not started (a gauge at 0 would claim a value): their entries say
which series a gateway sets once it has started.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from router import __version__
from router.edge_metrics import REHOME_REASONS
from router.ledger import ANSWERED_BY
from router.policies.base import Reason
from router.privacy.modes import blocks, can_keep_local, protects, redacts

TARGETS = ("edge", "cloud")
TOKEN_KINDS = ("prompt", "cached", "completion")
FAILURE_KINDS = ("connect", "timeout", "disconnected", "status", "invalid_answer")
CLOSE_REASONS = ("outcome", "idle")
PRIVACY_ACTIONS = ("detected", "redacted", "exposed", "blocked")
SHADOW_OUTCOMES = ("agree", "disagree", "failed", "over_budget", "busy", "private")
# The Redis store's operations (router/trajectory/resilient.py), each of which can fail, and
# what its outage journal keeps (router/trajectory/journal.py).
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
    "vault",
    "write_back",
)
# Why a process switched to its write-back journal (router/trajectory/resilient.py).
STORE_OUTAGE_CAUSES = ("unreachable", "full", "read_only")
JOURNAL_KINDS = ("step", "record", "note", "set_outcome", "close", "stitch")
# Why the outage journal's file could not keep a write (router/trajectory/journal_file.py).
JOURNAL_LOST_REASONS = ("file_full", "disk_error", "encode_error", "unreadable")
# Bounds of `limits` that count when they cut something off (router/server.py, streaming.py).
LIMITS_COUNTED = (
    "max_header_bytes",
    "header_timeout_s",
    "body_timeout_s",
    "max_answer_bytes",
    "max_sse_line_bytes",
    "max_idle_connections",
)
KEY_KINDS = ("client", "admin")  # the API keys a request may be asked for
CLIENT_LIMITS = ("requests_per_minute", "cloud_usd_per_day")
# The codes of requests refused before they became a step (Engine.refused).
BAD_REQUEST_CODES = ("invalid_json", "json_too_deep", "invalid_request", "model_not_found", "invalid_target")
# Kinds of value the optional detector backends add to Tandem's own (router/privacy/backends.py).
BACKEND_KINDS = {"presidio": ("PERSON", "ADDRESS")}


@dataclass(frozen=True)
class SeriesScope:
    """What decides which series a gateway can emit: its routes, whether the target header is
    honoured, its upstreams, whether it has a store, the kinds its detectors report, whether
    client keys have limits."""

    routes: Mapping[str, Any] = field(default_factory=dict)
    header_forced: bool = False
    upstreams: Mapping[str, Any] = field(default_factory=dict)  # name -> UpstreamSettings
    store: bool = False
    privacy_kinds: tuple[str, ...] = ()
    client_limits: bool = False
    edge_replicas: tuple[str, ...] = ()  # the edge pool's replicas, as labelled (public URLs)

    @classmethod
    def of(cls, settings: Any) -> SeriesScope:
        from router.privacy.detect import TYPES
        from router.privacy.opt_in import KINDS as OPT_IN
        from router.settings import public_url

        kinds = list(TYPES)
        for backend in settings.privacy_backends:
            kinds.extend(k for k in BACKEND_KINDS.get(backend, ()) if k not in kinds)
        for route in settings.routes.values():  # opt-in kinds a route detects (`privacy_detect`)
            kinds.extend(k for k in (OPT_IN[w] for w in getattr(route, "privacy_detect", ())) if k not in kinds)
        return cls(
            routes=settings.routes,
            header_forced=settings.allow_target_header,
            upstreams=settings.upstreams,
            store=settings.redis_url is not None,
            privacy_kinds=tuple(kinds),
            client_limits=_limited(settings.client_limits),
            edge_replicas=tuple(public_url(url) for url in settings.upstreams["edge"].endpoints),
        )


def _limited(limits: Any) -> bool:
    every = [limits, *limits.keys.values()]
    return any(limit.requests_per_minute is not None or limit.cloud_usd_per_day is not None for limit in every)


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


def _decisions(route: Any, header_forced: bool) -> Iterator[tuple[Reason, tuple[str, ...]]]:
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
    for reason, targets in _decisions(route, header_forced):
        local_only = reason in (Reason.PRIVACY, Reason.PINNED)
        for target in targets:
            pairs.add((target, reason.value))
            if route.failover and not local_only:
                pairs.add(("cloud" if target == "edge" else "edge", reason.value))
    return pairs


def reachable_targets(route: Any, header_forced: bool) -> set[str]:
    return {target for target, _ in step_labels(route, header_forced)}


def _reaches_cloud(route: Any, scope: SeriesScope) -> bool:
    return "cloud" in reachable_targets(route, scope.header_forced) or any(
        target == "cloud" for _, target in inner_calls(route)
    )


def privacy_actions(route: Any, scope: SeriesScope) -> tuple[str, ...]:
    """What can happen to a sensitive value on the route: every mode detects; `redact` redacts;
    `block` blocks; exposure is counted wherever the cloud may be asked, a protecting mode too
    (there it is a guard failure the critical alert must see from its first value)."""
    mode = str(route.privacy)
    actions = ["detected"]
    if redacts(mode):
        actions.append("redacted")
    if blocks(mode):
        actions.append("blocked")
    if _reaches_cloud(route, scope):
        actions.append("exposed")
    return tuple(actions)


# -- the declarations: metric name -> the label values it can be emitted with ---------------

Labels = tuple[str, ...]
PerRoute = Callable[[str, Any, "SeriesScope"], Iterable[Labels]]


def _each_route(per_route: PerRoute) -> Callable[[SeriesScope], Iterator[Labels]]:
    def each(scope: SeriesScope) -> Iterator[Labels]:
        for name, route in scope.routes.items():
            yield from per_route(name, route, scope)

    return each


def _steps(name: str, route: Any, scope: SeriesScope) -> Iterator[Labels]:
    """A step counts under the target that answered it (`StepRecord.answered_by`); a refused,
    failed or cancelled one under "none", with its reason, or `undecided` when it ended (the
    client left, the store refused it) before its decision. Every status of `router.ledger.STEP_STATUSES`."""
    reasons = set()
    for target, reason in step_labels(route, scope.header_forced):
        yield name, target, reason, "ok"
        reasons.add(reason)
    for reason in sorted(reasons | {Reason.UNDECIDED.value}):
        for status in ("error", "cancelled"):
            yield name, "none", reason, status
    if blocks(route.privacy):
        # A block route refuses a sensitive step its decision sent to the cloud.
        for reason in sorted({r.value for r, targets in _decisions(route, scope.header_forced) if "cloud" in targets}):
            yield name, "none", reason, "refused"


def _calls(name: str, route: Any, scope: SeriesScope) -> Iterator[tuple[str, str]]:
    """(target, call) the route books tokens and dollars under."""
    for target in reachable_targets(route, scope.header_forced):
        yield target, "step"
    for purpose, target in inner_calls(route):
        yield target, purpose
    if getattr(route, "shadow", None) is not None:
        for target in TARGETS:
            yield target, "shadow"


def _tokens(name: str, route: Any, scope: SeriesScope) -> Iterator[Labels]:
    for target, call in _calls(name, route, scope):
        for kind in TOKEN_KINDS:
            yield name, target, kind, call


def _cost(name: str, route: Any, scope: SeriesScope) -> Iterator[Labels]:
    for target, call in _calls(name, route, scope):
        yield name, target, call


def _fallbacks(name: str, route: Any, scope: SeriesScope) -> Iterator[Labels]:
    if route.failover and len(reachable_targets(route, scope.header_forced)) == 2:
        for source in TARGETS:
            for kind in FAILURE_KINDS:
                yield name, source, "cloud" if source == "edge" else "edge", kind


def _privacy(name: str, route: Any, scope: SeriesScope) -> Iterator[Labels]:
    actions = privacy_actions(route, scope)
    for kind in scope.privacy_kinds:
        for action in actions:
            yield name, kind, action
    if "blocked" in actions:
        yield name, "unknown", "blocked"  # a failed detection on a blocked step


def _shadow(name: str, route: Any, scope: SeriesScope) -> Iterator[Labels]:
    if getattr(route, "shadow", None) is not None:
        for target in TARGETS:
            for outcome in SHADOW_OUTCOMES:
                yield name, target, outcome


def _judge_failures(scope: SeriesScope) -> Iterator[Labels]:
    if any(str(route.strategy) == "judge" for route in scope.routes.values()):
        yield from (("score",), ("reload",))


def _if(condition: Callable[[SeriesScope], bool], values: Iterable[str]) -> Callable[[SeriesScope], Iterator[Labels]]:
    def each(scope: SeriesScope) -> Iterator[Labels]:
        if condition(scope):
            yield from ((value,) for value in values)

    return each


def _per_upstream(scope: SeriesScope) -> Iterator[Labels]:
    yield from ((name,) for name in scope.upstreams)


def _per_replica(scope: SeriesScope) -> Iterator[Labels]:
    yield from ((url,) for url in scope.edge_replicas)


def _route_histogram(name: str, route: Any, scope: SeriesScope) -> Iterator[Labels]:
    yield (name,)


SERIES: dict[str, Callable[[SeriesScope], Iterable[Labels]]] = {
    "tandem_steps": _each_route(_steps),
    "tandem_tokens": _each_route(_tokens),
    "tandem_cost_usd": _each_route(_cost),
    "tandem_counterfactual_cost_usd": _each_route(_route_histogram),
    "tandem_step_latency_seconds": lambda scope: ((t,) for t in ANSWERED_BY),
    "tandem_time_to_first_token_seconds": lambda scope: ((t,) for t in TARGETS),
    "tandem_fallbacks": _each_route(_fallbacks),
    "tandem_upstream_errors": lambda scope: ((u, k) for u in scope.upstreams for k in FAILURE_KINDS),
    "tandem_dropped_params": lambda scope: (
        (name, param) for name, upstream in scope.upstreams.items() for param in upstream.drop_params
    ),
    "tandem_bad_requests": lambda scope: ((code,) for code in BAD_REQUEST_CODES),
    "tandem_policy_failures": _each_route(
        lambda name, route, scope: ((name, kind) for kind in POLICY_FAILURE_KINDS.get(str(route.strategy), ()))
    ),
    "tandem_store_errors": _if(lambda scope: scope.store, STORE_OPERATIONS),
    "tandem_store_busy": _if(lambda scope: scope.store, STORE_OPERATIONS),
    "tandem_store_outages": _if(lambda scope: scope.store, STORE_OUTAGE_CAUSES),
    "tandem_store_reply_errors": _if(lambda scope: scope.store, STORE_OPERATIONS),
    "tandem_store_outage_dropped": _if(lambda scope: scope.store, JOURNAL_KINDS),
    "tandem_store_written_back": _if(lambda scope: scope.store, JOURNAL_KINDS),
    "tandem_journal_lost": _if(lambda scope: scope.store, JOURNAL_LOST_REASONS),
    "tandem_limit_exceeded": lambda scope: ((limit,) for limit in LIMITS_COUNTED),
    "tandem_client_limit_refusals": _if(lambda scope: scope.client_limits, CLIENT_LIMITS),
    "tandem_audit_lines": lambda scope: (("written",), ("dropped",)),
    "tandem_auth_failures": lambda scope: ((kind,) for kind in KEY_KINDS),
    "tandem_auth_throttled": lambda scope: ((kind,) for kind in KEY_KINDS),
    "tandem_privacy_values": _each_route(_privacy),
    "tandem_judge_score": _each_route(lambda name, route, scope: ((name,),) if str(route.strategy) == "judge" else ()),
    "tandem_judge_failures": _judge_failures,
    "tandem_shadow_calls": _each_route(_shadow),
    "tandem_trajectories_closed": _each_route(lambda name, route, scope: ((reason, name) for reason in CLOSE_REASONS)),
    "tandem_trajectory_steps": _each_route(_route_histogram),
    "tandem_trajectory_cost_usd": _each_route(_route_histogram),
    "tandem_trajectory_cloud_share": _each_route(_route_histogram),
    "tandem_trajectory_savings_usd": _each_route(_route_histogram),
    "tandem_trajectory_loss_usd": _each_route(_route_histogram),
    "tandem_trajectory_privacy_score": _each_route(_route_histogram),
    # Gauges, set rather than started: at start-up (route_info, the share target, build_info)
    # or by the upstream probe at start and on every /readyz (reachable, authorised).
    "tandem_upstream_reachable": _per_upstream,
    "tandem_upstream_authorised": _per_upstream,
    "tandem_build_info": lambda scope: ((__version__,),),
    "tandem_edge_replica_steps": _per_replica,
    "tandem_edge_rehomes": _if(lambda scope: bool(scope.edge_replicas), REHOME_REASONS),
    "tandem_edge_load_spills": _each_route(
        lambda name, route, scope: ((name,),) if scope.edge_replicas and route.edge_full == "cloud" else ()
    ),
    "tandem_edge_replica_in_flight": _per_replica,
    "tandem_edge_replica_waiting": _per_replica,
    "tandem_edge_replica_running": _per_replica,
    "tandem_edge_replica_kv_cache_usage": _per_replica,
    "tandem_edge_replica_prefix_cache_hit_ratio": _per_replica,
    "tandem_edge_replica_available": _per_replica,
    "tandem_route_info": _each_route(lambda name, route, scope: ((name, str(route.strategy), str(route.privacy)),)),
    "tandem_route_cloud_share_target": _each_route(
        lambda name, route, scope: ((name,),) if route.intended_cloud_share() is not None else ()
    ),
}


def start_series(families: Iterable[Any], scope: SeriesScope) -> None:
    """Create at zero every declared series of every labelled counter and histogram (`families`:
    prometheus-client metrics). Unlabelled ones show a zero by themselves; gauges are set."""
    for family in families:
        labelled = bool(family._labelnames)
        if not labelled or family._type == "gauge" or family._name not in SERIES:
            continue
        for labels in SERIES[family._name](scope):
            family.labels(*labels)
