"""The gateway's metric families: every counter, histogram and gauge it declares (prefix
`tandem_`, labels bounded, never a trajectory id), each with its help text and labels.

`MetricFamilies` declares them in a registry of its own; `router.metrics.core.Metrics` adds how a
step, a closed run and a scrape use them. Kept apart so that what is exported (names, help,
labels, buckets, how workers' gauges combine) reads in one place.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from router import __version__
from router.metrics.edge import edge_series
from router.metrics.multiprocess import multiprocess_active

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
SHARE_BUCKETS = (0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1)
_GaugeMode = Literal["livemostrecent", "max", "livesum"]
_M = TypeVar("_M", Counter, Gauge, Histogram)


class MetricFamilies:
    """Every family the gateway exports, declared in its own registry (one per gateway, so
    that tests and several gateways in one process never share counters)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.multiprocess = multiprocess_active()
        self._families: list[Counter | Gauge | Histogram] = []
        self._steps_and_money()
        self._failures()
        self._judge_and_privacy()
        self._trajectories()
        self._gauges()
        # The edge pool's series (router/metrics/edge.py).
        self.edge = edge_series(self._counter, self._gauge)

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
        self.step_repeats = c(
            "tandem_step_repeats",
            "Answered attempts of a step whose answer counted already (sent again after its answer), by route, target",
            ("route", "target"),
        )
        # Also in tandem_steps_total (target none, status error), as the ledger counts them in
        # `errors`: this says which of those failed steps were lost (router/trajectory/lost.py).
        self.lost_steps = c(
            "tandem_steps_lost",
            "Steps counted in the shared store that were never recorded (their worker was killed, or their start "
            "reached Redis after the gateway refused it), recorded lost by the idle sweep, by the run's route",
            ("route",),
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
        self.upstream_calls = c(
            "tandem_upstream_calls",
            "Calls sent to an upstream (a step's, its fallback's and its strategy's inner calls), by upstream",
            ("upstream",),
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
        self.kept_responses = c(
            "tandem_kept_responses",
            "Responses API answers kept for previous_response_id and what became of them, by event: kept "
            "(shared by every replica), kept_here (in this process only: no Redis, or it was out), continued (a "
            "request named one, or resent its conversation whole), not_found (a request named one that is not "
            "kept: a 400), deleted",
            ("event",),
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
        self.kept_responses_bytes = g(
            "tandem_kept_responses_memory_bytes",
            "Bytes of kept responses held in the gateway's processes (each bounded by kept_responses.memory_bytes)",
            (),
            "livesum",
        )
        # A gauge rather than an Info: Info does not work in multiprocess mode. Same exposition.
        self.build_info = g("tandem_build_info", "Build information", ("version",), "max")
        self.build_info.labels(__version__).set(1)
