"""Every series the gateway can emit, declared per metric, so that all of them start at zero.

A counter born at its first event hides that event from `increase()` and `rate()`: the first
leak of a kind on a route would never fire the privacy alert, and a panel would show "No data"
rather than 0. So every labelled counter and histogram has an entry in `SERIES`: a function
that lists the label values it can be emitted with, for a gateway's settings (`SeriesScope`).
`start_series` creates each of them at start-up, and tests/deploy/test_series.py checks, for
every declared metric, that a real gateway's /metrics shows every combination at zero, and
that a metric without an entry fails: series that later work adds inherit the rule.

Only what a route can emit (router/metrics/route_labels.py): the reasons its strategy gives, with the
targets each can end on (the other one too when the route fails over), the constraint and
privacy reasons its settings make possible, the inner calls its strategy makes, the privacy
actions its mode takes. Nothing for routes that cannot produce it, so that a 100-route gateway
does not expose thousands of idle series. Gauges are set, not started (a gauge at 0 would claim
a value): their entries say which series a gateway sets once it has started.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from router import __version__
from router.config.base import public_url
from router.config.privacy import blocks
from router.ledger import ANSWERED_BY
from router.metrics.edge import REHOME_REASONS
from router.metrics.route_labels import (
    TARGETS,
    decisions,
    inner_calls,
    privacy_actions,
    reachable_targets,
    step_labels,
)
from router.result import Reason

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
    "ping",  # `/readyz` asking Redis in `redis_failure: refuse` mode
    "recent",
    "record",
    "records",
    "set_outcome",
    "stitch",
    "vault",
    "write_back",
    "kept_responses",
)
# What becomes of a kept response (router/surfaces/responses/kept.py).
KEPT_EVENTS = ("kept", "kept_here", "continued", "not_found", "deleted")
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
    "max_body_bytes_in_flight",
    "send_timeout_s",
    "max_answer_bytes",
    "max_sse_line_bytes",
    "max_idle_connections",
)
KEY_KINDS = ("client", "admin")  # the API keys a request may be asked for
CLIENT_LIMITS = ("requests_per_minute", "cloud_usd_per_day")
# The codes of requests refused before they became a step (Engine.refused).
BAD_REQUEST_CODES = ("invalid_json", "json_too_deep", "invalid_request", "model_not_found", "invalid_target")


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
    kept_responses: bool = False

    @classmethod
    def of(cls, settings: Any, privacy_kinds: tuple[str, ...]) -> SeriesScope:
        """The scope of a gateway with these settings, whose detectors report `privacy_kinds`
        (router/privacy/reported.py: privacy sits above the metrics, so its caller asks)."""
        return cls(
            routes=settings.routes,
            header_forced=settings.allow_target_header,
            upstreams=settings.upstreams,
            store=settings.redis_url is not None,
            privacy_kinds=privacy_kinds,
            client_limits=_limited(settings.client_limits),
            edge_replicas=tuple(public_url(url) for url in settings.upstreams["edge"].endpoints),
            kept_responses=settings.kept_responses.enabled,
        )


def _limited(limits: Any) -> bool:
    every = [limits, *limits.keys.values()]
    return any(limit.requests_per_minute is not None or limit.cloud_usd_per_day is not None for limit in every)


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
        for reason in sorted({r.value for r, targets in decisions(route, scope.header_forced) if "cloud" in targets}):
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
    actions = privacy_actions(route, scope.header_forced)
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
    "tandem_step_repeats": _each_route(
        lambda name, route, scope: ((name, t) for t in reachable_targets(route, scope.header_forced))
    ),
    # Only a shared store counts a step that no process recorded (router/trajectory/lost.py).
    "tandem_steps_lost": lambda scope: ((name,) for name in scope.routes if scope.store),
    "tandem_tokens": _each_route(_tokens),
    "tandem_cost_usd": _each_route(_cost),
    "tandem_counterfactual_cost_usd": _each_route(_route_histogram),
    "tandem_step_latency_seconds": lambda scope: ((t,) for t in ANSWERED_BY),
    "tandem_time_to_first_token_seconds": lambda scope: ((t,) for t in TARGETS),
    "tandem_fallbacks": _each_route(_fallbacks),
    "tandem_upstream_errors": lambda scope: ((u, k) for u in scope.upstreams for k in FAILURE_KINDS),
    "tandem_upstream_calls": lambda scope: ((u,) for u in scope.upstreams),
    "tandem_dropped_params": lambda scope: (
        (name, param) for name, upstream in scope.upstreams.items() for param in upstream.drop_params
    ),
    "tandem_bad_requests": lambda scope: ((code,) for code in BAD_REQUEST_CODES),
    "tandem_policy_failures": _each_route(lambda name, route, scope: ((name, kind) for kind in route.failure_kinds())),
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
    "tandem_kept_responses": _if(lambda scope: scope.kept_responses, KEPT_EVENTS),
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
    "tandem_edge_replica_failures": lambda scope: ((url, k) for url in scope.edge_replicas for k in FAILURE_KINDS),
    "tandem_edge_rehomes": _if(lambda scope: bool(scope.edge_replicas), REHOME_REASONS),
    "tandem_edge_load_spills": _each_route(
        lambda name, route, scope: ((name,),) if scope.edge_replicas and route.edge_full == "cloud" else ()
    ),
    "tandem_edge_replica_in_flight": _per_replica,
    "tandem_edge_replica_waiting": _per_replica,
    "tandem_edge_replica_running": _per_replica,
    "tandem_edge_replica_kv_cache_usage": _per_replica,
    "tandem_edge_replica_estimated_wait_seconds": _per_replica,
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
