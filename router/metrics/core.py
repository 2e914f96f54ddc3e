"""Prometheus metrics, prefix `tandem_`, labels bounded (never a trajectory id): what a step,
a closed run and a scrape do with the families `router.metrics.families` declares.

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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from router.metrics.exposition import FilesWriter, RegistryWriter
from router.metrics.families import MetricFamilies
from router.metrics.fast import adder
from router.metrics.multiprocess import MULTIPROC_ENV as MULTIPROC_ENV
from router.metrics.multiprocess import multiprocess_active as multiprocess_active
from router.metrics.multiprocess import prepare_multiprocess as prepare_multiprocess
from router.metrics.multiprocess import sweep_dead_workers as sweep_dead_workers
from router.metrics.route_series import KEY_KINDS as KEY_KINDS
from router.metrics.route_series import SeriesScope, start_series

if TYPE_CHECKING:
    from router.ledger import StepRecord

log = logging.getLogger("tandem.metrics")


class ClosedRun(Protocol):
    """What the per-run figures read of a closed trajectory (router/trajectory/state.py's
    `Trajectory`, which sits above the metrics)."""

    @property
    def route(self) -> str: ...
    @property
    def close_reason(self) -> str | None: ...
    @property
    def steps(self) -> int: ...
    @property
    def money(self) -> Mapping[str, float]: ...
    @property
    def cloud_share(self) -> float: ...
    @property
    def savings_usd(self) -> float: ...


class Metrics(MetricFamilies):
    def __init__(self) -> None:
        super().__init__()
        self._initialise()
        # The per-step series' children's updates, found once per label set: `labels()` costs
        # about a microsecond a call, and a step books eight (the label values are bounded).
        self._adders: dict[tuple[Any, ...], Callable[[float], None]] = {}
        self._writer: RegistryWriter | FilesWriter | None = (
            FilesWriter(Path(os.environ[MULTIPROC_ENV]), self._families)
            if self.multiprocess
            else RegistryWriter(self._families)
        )

    def _initialise(self) -> None:
        # The series that depend on no setting (latency by target, audit outcomes, bad
        # requests by code, limits) exist from the start, so that rate() and the alert rules see
        # a zero rather than nothing before the first event. The rest start in `describe`.
        start_series(self._families, SeriesScope())

    # -- recording ---------------------------------------------------------------------------

    def describe(self, scope: SeriesScope) -> None:
        """Start at zero every series the gateway can emit (router/metrics/route_series.py), and export
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

    def calls_of(self, upstream: str) -> Callable[[float], None]:
        """What counts one call sent to `upstream` (`tandem_upstream_calls_total`)."""
        return self._add(self.upstream_calls, upstream)

    def step_closed(self, record: StepRecord) -> None:
        """A step's tokens, dollars, decision and latency, once its record is final. Every call
        is booked under the target that served it; the sum of `tandem_cost_usd_total` equals
        the ledger's cost, inner calls of failed steps included."""
        route, target, add = record.route, record.target, self._add
        for call in record.inner:
            if call.usage is not None:
                self._tokens(route, call.target, call.purpose, call.usage)
            if call.cost_usd:
                add(self.cost, route, call.target, call.purpose)(call.cost_usd)
        if record.usage is not None:
            self._tokens(route, target, "step", record.usage)
            add(self.cost, route, target, "step")(max(record.cost_usd - record.inner_cost_usd, 0.0))
        add(self.counterfactual_cost, route)(record.counterfactual_usd)
        # Steps and their latency under the target that answered (`StepRecord.answered_by`, the
        # ledger's and the view's definition too): a failover step under the one that answered
        # it, a refused, failed or cancelled step under "none"; money above stays where it went.
        answered = record.answered_by
        if answered == "none":  # (an answered step is booked once the store has said: `steps_written`)
            add(self.steps, route, answered, record.reason, record.status)(1)
        add(self.latency, answered)(record.latency_s)
        if answered != "none":  # a step no target answered has no first byte of an answer
            add(self.ttft, answered)(record.ttft_s)

    def steps_written(self, records: list[StepRecord], repeats: list[bool]) -> None:
        """Answered steps, once the store said whether each repeats an answer its step counted
        already (the same request sent again after its answer; a step counts once, whichever
        of its answered attempts is recorded first): a repeat is booked in
        `tandem_step_repeats_total`, not as a step, so that `tandem_steps_total` of a target
        counts what the ledger's `cloud_steps` and `edge_steps` do."""
        add = self._add
        for record, repeat in zip(records, repeats, strict=True):
            if record.answered_by == "none":
                continue  # booked when it closed
            if repeat:
                add(self.step_repeats, record.route, record.answered_by)(1)
            else:
                add(self.steps, record.route, record.answered_by, record.reason, record.status)(1)

    def steps_lost(self, records: list[StepRecord]) -> None:
        """Lost steps' records this process wrote (router/trajectory/lost.py): each a failed step
        in `tandem_steps_total` (under target none, as the ledger counts it in `errors`), and in
        `tandem_steps_lost_total`. No latency, tokens or dollars: none are known."""
        add = self._add
        for record in records:
            add(self.steps, record.route, record.answered_by, record.reason, record.status)(1)
            add(self.lost_steps, record.route)(1)

    def judge_scored(self, route: str, score: float, seconds: float) -> None:
        """The judge's score of a step on `route` and the time its decision took."""
        self.judge_latency.observe(seconds)
        self._add(self.judge_score, route)(score)

    def shadow_spent(self, route: str, target: str, usage: Any, cost_usd: float) -> None:
        """A shadow call's tokens and dollars, as `call="shadow"` (not in any step's record)."""
        if usage is not None:
            self._tokens(route, target, "shadow", usage)
        self._add(self.cost, route, target, "shadow")(cost_usd)

    def _tokens(self, route: str, target: str, call: str, usage: Any) -> None:
        add = self._add
        add(self.tokens, route, target, "prompt", call)(usage.prompt_tokens)
        add(self.tokens, route, target, "cached", call)(usage.cached_tokens)
        add(self.tokens, route, target, "completion", call)(usage.completion_tokens)

    def _add(self, family: Counter | Histogram, *values: str) -> Callable[[float], None]:
        """`family.labels(*values)`'s `inc` or `observe` (router/metrics/fast.py), remembered."""
        key = (family, *values)
        add = self._adders.get(key)
        if add is None:
            add = self._adders[key] = adder(family.labels(*values))
        return add

    def trajectory_closed(self, trajectory: ClosedRun, privacy_score: float | None = None) -> None:
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
