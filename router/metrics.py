"""Prometheus metrics, prefix `tandem_`, labels bounded (never a trajectory id).

One `Metrics` object per gateway with its own registry, so that tests and several gateways in
one process never share counters.

With several uvicorn workers (`tandem serve --workers N`) each worker is its own process with
its own counters; prometheus-client's multiprocess mode makes `/metrics` answer for all of
them. `prepare_multiprocess` (called by `tandem serve` before the workers start) points
`PROMETHEUS_MULTIPROC_DIR` at a fresh folder; every worker then keeps its values in memory-mapped
files there, and whichever worker answers a scrape reads and sums them all. Gauges say how to
combine workers (`multiprocess_mode`); the live-only gauges of a worker that died are dropped at
the next scrape.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from router import __version__
from router.edge_metrics import edge_series
from router.exposition import FilesWriter, RegistryWriter
from router.metrics_multiprocess import MULTIPROC_ENV as MULTIPROC_ENV
from router.metrics_multiprocess import multiprocess_active as multiprocess_active
from router.metrics_multiprocess import prepare_multiprocess as prepare_multiprocess
from router.metrics_multiprocess import sweep_dead_workers as sweep_dead_workers
from router.route_series import KEY_KINDS as KEY_KINDS
from router.route_series import SeriesScope, start_series

if TYPE_CHECKING:
    from router.ledger import StepRecord
    from router.trajectory.state import Trajectory

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
SHARE_BUCKETS = (0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1)
_GaugeMode = Literal["livemostrecent", "max", "livesum"]
_M = TypeVar("_M", Counter, Gauge, Histogram)

log = logging.getLogger("tandem.metrics")


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.multiprocess = multiprocess_active()
        self._families: list[Counter | Gauge | Histogram] = []
        self._steps_and_money()
        self._failures()
        self._judge_and_privacy()
        self._trajectories()
        self._gauges()
        # The edge pool's series (router/edge_metrics.py).
        self.edge = edge_series(self._counter, self._gauge)
        self._initialise()
        # The per-step series' children, found once per label set: `labels()` costs about a
        # microsecond a call, and a step books eight (the label values are bounded).
        self._children: dict[tuple[Any, ...], Any] = {}
        self._writer: RegistryWriter | FilesWriter | None = (
            FilesWriter(Path(os.environ[MULTIPROC_ENV]), self._families)
            if self.multiprocess
            else RegistryWriter(self._families)
        )

    # -- definitions -------------------------------------------------------------------------

    def _counter(self, name: str, doc: str, labels: Iterable[str] = ()) -> Counter:
        return self._family(Counter(name, doc, tuple(labels), registry=self.registry))

    def _histogram(self, name: str, doc: str, labels: Iterable[str], buckets: Iterable[float]) -> Histogram:
        return self._family(Histogram(name, doc, tuple(labels), buckets=tuple(buckets), registry=self.registry))

    def _gauge(self, name: str, doc: str, labels: Iterable[str], mode: _GaugeMode) -> Gauge:
        gauge = Gauge(name, doc, tuple(labels), registry=self.registry, multiprocess_mode=mode)
        return self._family(gauge)

    def _family(self, metric: _M) -> _M:
        self._families.append(metric)
        return metric

    def _steps_and_money(self) -> None:
        c, h = self._counter, self._histogram
        self.steps = c(
            "tandem_steps",
            "Steps by route, the target that answered (none: refused, failed or cancelled), reason and status",
            ("route", "target", "reason", "status"),
        )
        # `call`: "step" for the call that answered the agent, else the inner call's purpose
        # (probe, judge, draft, verify, edge, advisor, plan, summary); each call is booked under
        # the target that served it, so that an edge probe of a cloud step counts as edge.
        self.tokens = c(
            "tandem_tokens",
            "Tokens by route, target, kind (prompt, cached, completion) and call (step or an inner call's purpose)",
            ("route", "target", "kind", "call"),
        )
        self.cost = c(
            "tandem_cost_usd",
            "Dollars spent, by route, target and call (step or inner purpose)",
            ("route", "target", "call"),
        )
        self.counterfactual_cost = c(
            "tandem_counterfactual_cost_usd",
            "Dollars the same steps would have cost on an all-cloud run (its prompt cache modelled), by route",
            ("route",),
        )
        self.latency = h(
            "tandem_step_latency_seconds",
            "Step latency, request to last byte, by the target that answered (or none)",
            ("target",),
            LATENCY_BUCKETS,
        )
        self.ttft = h(
            "tandem_time_to_first_token_seconds",
            "Time to the upstream's first byte, by target",
            ("target",),
            LATENCY_BUCKETS,
        )

    def _failures(self) -> None:
        c = self._counter
        self.fallbacks = c(
            "tandem_fallbacks",
            "Steps that went to the other target after a failure",
            ("route", "from_target", "to_target", "kind"),
        )
        self.upstream_errors = c(
            "tandem_upstream_errors", "Upstream failures by upstream and kind", ("upstream", "kind")
        )
        self.dropped_params = c(
            "tandem_dropped_params", "Request keys dropped for an upstream (its drop_params)", ("upstream", "param")
        )
        self.bad_requests = c("tandem_bad_requests", "Requests refused with a 4xx before routing, by code", ("code",))
        self.policy_failures = c(
            "tandem_policy_failures",
            "Inner calls of a strategy that failed or answered unreadably, by route and kind (the call's purpose)",
            ("route", "kind"),
        )
        self.store_errors = c("tandem_store_errors", "Trajectory store (Redis) failures, by operation", ("operation",))
        self.limit_exceeded = c(
            "tandem_limit_exceeded",
            "Requests, connections and upstream answers cut off by a bound of `limits` (named by its key)",
            ("limit",),
        )
        self.upstream_reachable = self._gauge(
            "tandem_upstream_reachable",
            "1 when the upstream answered HTTP at its last probe",
            ("upstream",),
            "livemostrecent",
        )
        self.upstream_authorised = self._gauge(
            "tandem_upstream_authorised",
            "1 when the upstream accepted the gateway's key at its last probe (0 on a 401 or 403)",
            ("upstream",),
            "livemostrecent",
        )
        self.auth_failures = c(
            "tandem_auth_failures",
            "Requests whose API key was missing or wrong, by the kind of key asked for (client, admin)",
            ("key_kind",),
        )
        self.auth_throttled = c(
            "tandem_auth_throttled",
            "Requests refused with 429 because their address failed too many key checks (auth_throttle), by key kind",
            ("key_kind",),
        )
        self.client_limit_refusals = c(
            "tandem_client_limit_refusals",
            "Requests refused with 429 because their client key was over a limit, by limit",
            ("limit",),
        )
        self.store_reply_errors = c(
            "tandem_store_reply_errors",
            "Trajectory store (Redis) error replies, by operation (not an outage: the breaker stays closed)",
            ("operation",),
        )
        self.store_outages = c(
            "tandem_store_outages",
            "Times this process switched to the write-back journal, by cause: unreachable (a connection "
            "failure or timeout), full (Redis at maxmemory refused a write), read_only (a read-only replica)",
            ("cause",),
        )
        self.store_busy = c(
            "tandem_store_busy",
            "Store calls that found no free pooled Redis connection within redis_pool_wait_s, by operation "
            "(load, not an outage: the call failed or was retried, the breaker stayed closed)",
            ("operation",),
        )
        self.store_outage_dropped = c(
            "tandem_store_outage_dropped",
            "Writes not kept during a store outage because the outage journal was full, by kind",
            ("kind",),
        )
        self.journal_lost = c(
            "tandem_journal_lost",
            "Writes kept during a store outage that the journal file could not keep (they live in memory "
            "only and are lost if the worker stops before the store is back), by reason",
            ("reason",),
        )
        self.store_written_back = c(
            "tandem_store_written_back",
            "Writes kept during a store outage and written back on recovery, by kind (step, record, note…)",
            ("kind",),
        )
        self.audit_lines = c("tandem_audit_lines", "Audit lines, by outcome (written, dropped)", ("outcome",))
        self.audit_write_errors = c("tandem_audit_write_errors", "Failed writes to the audit log (each retried)")
        self.audit_failing = self._gauge(
            "tandem_audit_failing", "1 while the audit log cannot be written (lines queue, then drop)", (), "max"
        )

    def _judge_and_privacy(self) -> None:
        c, h = self._counter, self._histogram
        self.privacy_values = c(
            "tandem_privacy_values",
            "Sensitive values by route, type and what happened to them "
            "(detected, redacted, exposed to the cloud, blocked)",
            ("route", "type", "action"),
        )
        self.privacy_failures = c("tandem_privacy_failures", "Detection failures (the step was treated as sensitive)")
        self.judge_latency = h(
            "tandem_judge_latency_seconds",
            "ONNX judge latency (features and inference) per step",
            (),
            (0.00002, 0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.005, 0.01),
        )
        self.judge_score = h(
            "tandem_judge_score", "ONNX judge scores", ("route",), (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
        )
        self.judge_failures = c(
            "tandem_judge_failures",
            "Judge failures that fell back to the configured target, and model reloads that failed",
            ("kind",),
        )
        # Shadow labelling (router/shadow.py): outcome is agree, disagree, failed, over_budget,
        # busy (too many in flight) or private (the route's privacy kept the step off the cloud).
        self.shadow_calls = c(
            "tandem_shadow_calls",
            "Shadow calls (the other target asked a sampled step again), by route, target and outcome",
            ("route", "target", "outcome"),
        )

    def _trajectories(self) -> None:
        c, h = self._counter, self._histogram
        self.trajectories_closed = c(
            "tandem_trajectories_closed", "Trajectories closed, by reason and route", ("reason", "route")
        )
        self.run_steps = h(
            "tandem_trajectory_steps",
            "Steps per closed trajectory",
            ("route",),
            (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
        )
        self.run_cost = h(
            "tandem_trajectory_cost_usd",
            "Dollars per closed trajectory",
            ("route",),
            (0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25),
        )
        self.run_cloud_share = h(
            "tandem_trajectory_cloud_share",
            "Share of steps answered by the cloud, per closed trajectory",
            ("route",),
            SHARE_BUCKETS,
        )
        self.run_savings = h(
            "tandem_trajectory_savings_usd",
            "Dollars saved against all-cloud, per closed trajectory",
            ("route",),
            (0, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
        )
        # A run that cost more than all-cloud (inner calls, cold prompt caches) is a loss, not a
        # zero saving. A histogram's sum must not go down (rate() would read a reset), so the
        # loss is its own series: net savings = savings_sum - loss_sum.
        self.run_loss = h(
            "tandem_trajectory_loss_usd",
            "Dollars a closed trajectory cost beyond its all-cloud counterfactual (0 when it saved)",
            ("route",),
            (0, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
        )
        self.run_privacy = h(
            "tandem_trajectory_privacy_score",
            "Privacy score (1 = nothing sensitive reached the cloud) per closed trajectory",
            ("route",),
            (0, *SHARE_BUCKETS[1:-1], 0.95, 1),
        )

    def _gauges(self) -> None:
        # Every worker reports the same figure for these, so `max` merges them; the active count
        # is set at scrape time, so the most recent live worker's value is the current one.
        g = self._gauge
        self.active_trajectories = g(
            "tandem_active_trajectories",
            "Open trajectories (begun, not closed) in the trajectory store",
            (),
            "livemostrecent",
        )
        self.route_info = g(
            "tandem_route_info",
            "One series per configured route, naming its strategy and privacy policy",
            ("route", "strategy", "privacy"),
            "max",
        )
        self.route_cloud_share_target = g(
            "tandem_route_cloud_share_target",
            "A route's intended cloud share: its target_cloud_share, else constraints.max_cloud_share, "
            "else the random strategy's p (routes with none of these have no series)",
            ("route",),
            "max",
        )
        self.store_outage_pending = g(
            "tandem_store_outage_pending",
            "Writes kept during a store outage, waiting to be written back (steps, records, notes…)",
            (),
            "livesum",
        )
        # A gauge rather than an Info: Info does not work in multiprocess mode. Same exposition.
        self.build_info = g("tandem_build_info", "Build information", ("version",), "max")
        self.build_info.labels(__version__).set(1)

    def _initialise(self) -> None:
        # The series that depend on no setting (latency by target, audit outcomes, bad
        # requests by code, limits) exist from the start, so that rate() and the alert rules see
        # a zero rather than nothing before the first event. The rest start in `describe`.
        start_series(self._families, SeriesScope())

    # -- recording ---------------------------------------------------------------------------

    def describe(self, scope: SeriesScope) -> None:
        """Start at zero every series the gateway can emit (router/route_series.py), and export
        each route's strategy, privacy policy and intended cloud share (the alert rules
        compare the observed share with it)."""
        start_series(self._families, scope)
        for name, route in scope.routes.items():
            self.route_info.labels(name, str(route.strategy), str(route.privacy)).set(1)
            target = route.intended_cloud_share()
            if target is not None:
                self.route_cloud_share_target.labels(name).set(float(target))

    def describe_routes(self, routes: Mapping[str, Any], header_forced: bool = False) -> None:
        """`describe` for routes alone (`routes` maps a route name to its settings)."""
        self.describe(SeriesScope(routes=routes, header_forced=header_forced))

    def limit_hit(self, limit: str) -> None:
        """A bound of `limits` cut something off; `limit` is its key (max_header_bytes…)."""
        self.limit_exceeded.labels(limit).inc()

    def step_closed(self, record: StepRecord) -> None:
        """A step's tokens, dollars, decision and latency, once its record is final. Every call
        is booked under the target that served it; the sum of `tandem_cost_usd_total` equals
        the ledger's cost, inner calls of failed steps included."""
        route, target, child = record.route, record.target, self._child
        for call in record.inner:
            if call.usage is not None:
                self._tokens(route, call.target, call.purpose, call.usage)
            if call.cost_usd:
                child(self.cost, route, call.target, call.purpose).inc(call.cost_usd)
        if record.usage is not None:
            self._tokens(route, target, "step", record.usage)
            child(self.cost, route, target, "step").inc(max(record.cost_usd - record.inner_cost_usd, 0.0))
        child(self.counterfactual_cost, route).inc(record.counterfactual_usd)
        # Steps and their latency under the target that answered (`StepRecord.answered_by`, the
        # ledger's and the view's definition too): a failover step under the one that answered
        # it, a refused, failed or cancelled step under "none"; money above stays where it went.
        answered = record.answered_by
        child(self.steps, route, answered, record.reason, record.status).inc()
        child(self.latency, answered).observe(record.latency_s)
        if answered != "none":  # a step no target answered has no first byte of an answer
            child(self.ttft, answered).observe(record.ttft_s)

    def shadow_spent(self, route: str, target: str, usage: Any, cost_usd: float) -> None:
        """A shadow call's tokens and dollars, as `call="shadow"` (not in any step's record)."""
        if usage is not None:
            self._tokens(route, target, "shadow", usage)
        self._child(self.cost, route, target, "shadow").inc(cost_usd)

    def _tokens(self, route: str, target: str, call: str, usage: Any) -> None:
        child = self._child
        child(self.tokens, route, target, "prompt", call).inc(usage.prompt_tokens)
        child(self.tokens, route, target, "cached", call).inc(usage.cached_tokens)
        child(self.tokens, route, target, "completion", call).inc(usage.completion_tokens)

    def _child(self, family: Counter | Histogram, *values: str) -> Any:
        """`family.labels(*values)`, remembered."""
        key = (family, *values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = family.labels(*values)
        return child

    def trajectory_closed(self, trajectory: Trajectory, privacy_score: float | None = None) -> None:
        """Per-run figures, recorded once, by whoever closed the trajectory."""
        route = trajectory.route
        self.trajectories_closed.labels(trajectory.close_reason or "unknown", route).inc()
        self.run_steps.labels(route).observe(trajectory.steps)
        self.run_cost.labels(route).observe(trajectory.money["cost_usd"])
        self.run_cloud_share.labels(route).observe(trajectory.cloud_share)
        self.run_savings.labels(route).observe(max(trajectory.savings_usd, 0.0))
        self.run_loss.labels(route).observe(max(-trajectory.savings_usd, 0.0))
        if privacy_score is not None:
            self.run_privacy.labels(route).observe(privacy_score)

    # -- exposition --------------------------------------------------------------------------

    def exposition(self) -> bytes:
        """The text a scrape gets: this gateway's registry, or every worker's files."""
        if self.multiprocess:
            with contextlib.suppress(OSError):
                sweep_dead_workers(Path(os.environ[MULTIPROC_ENV]))
        if self._writer is not None:
            try:
                return self._writer.render()
            except Exception:  # a prometheus-client whose internals moved: be slow, not down
                log.warning("fast /metrics writer failed; using prometheus-client's", exc_info=True)
                self._writer = None
        return self.library_exposition()

    def library_exposition(self) -> bytes:
        """prometheus-client's own exposition (the reference the fast writers are tested against)."""
        if not self.multiprocess:
            return generate_latest(self.registry)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, os.environ[MULTIPROC_ENV])  # type: ignore[no-untyped-call]
        return generate_latest(registry)
