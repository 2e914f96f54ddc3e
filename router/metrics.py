"""Prometheus metrics, prefix `tandem_`, labels bounded (never a trajectory id).

One `Metrics` object per gateway with its own registry, so that tests and several gateways in
one process never share counters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, Info, generate_latest

from router import __version__

if TYPE_CHECKING:
    from router.trajectory.state import Trajectory

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.steps = Counter(
            "tandem_steps",
            "Steps answered, by route, target, reason and status",
            ("route", "target", "reason", "status"),
            registry=self.registry,
        )
        self.fallbacks = Counter(
            "tandem_fallbacks",
            "Steps that went to the other target after a failure",
            ("route", "from_target", "to_target", "kind"),
            registry=self.registry,
        )
        self.upstream_errors = Counter(
            "tandem_upstream_errors",
            "Upstream failures by upstream and kind",
            ("upstream", "kind"),
            registry=self.registry,
        )
        self.dropped_params = Counter(
            "tandem_dropped_params",
            "Request keys dropped for an upstream (its drop_params)",
            ("upstream", "param"),
            registry=self.registry,
        )
        self.tokens = Counter(
            "tandem_tokens",
            "Tokens by target and kind (prompt, cached, completion)",
            ("target", "kind"),
            registry=self.registry,
        )
        self.cost = Counter(
            "tandem_cost_usd",
            "Dollars spent, by target",
            ("target",),
            registry=self.registry,
        )
        self.counterfactual_cost = Counter(
            "tandem_counterfactual_cost_usd",
            "Dollars the same steps would have cost on the cloud",
            registry=self.registry,
        )
        self.latency = Histogram(
            "tandem_step_latency_seconds",
            "Step latency, request to last byte, by target",
            ("target",),
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.ttft = Histogram(
            "tandem_time_to_first_token_seconds",
            "Time to the upstream's first byte, by target",
            ("target",),
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.bad_requests = Counter(
            "tandem_bad_requests",
            "Requests refused with a 4xx before routing, by code",
            ("code",),
            registry=self.registry,
        )
        self.policy_failures = Counter(
            "tandem_policy_failures", "Strategy failures that fell back (judge down, advisor timeout…)",
            ("route", "kind"), registry=self.registry,
        )
        self.privacy_values = Counter(
            "tandem_privacy_values", "Sensitive values by type and what happened to them "
            "(detected, redacted, exposed to the cloud, blocked)",
            ("type", "action"), registry=self.registry,
        )
        self.privacy_failures = Counter(
            "tandem_privacy_failures", "Detection failures (the step was treated as sensitive)",
            registry=self.registry,
        )
        self.judge_latency = Histogram(
            "tandem_judge_latency_seconds", "ONNX judge latency (features and inference) per step",
            buckets=(0.00002, 0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.005, 0.01), registry=self.registry,
        )
        self.judge_score = Histogram(
            "tandem_judge_score", "ONNX judge scores", ("route",),
            buckets=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0), registry=self.registry,
        )
        self.judge_failures = Counter(
            "tandem_judge_failures", "Judge failures that fell back to the configured target, and model reloads "
            "that failed", ("kind",), registry=self.registry,
        )
        self.run_privacy = Histogram(
            "tandem_trajectory_privacy_score", "Privacy score (1 = nothing sensitive reached the cloud) "
            "per closed trajectory", ("route",),
            buckets=(0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1), registry=self.registry,
        )
        self.store_errors = Counter(
            "tandem_store_errors",
            "Trajectory store (Redis) failures, by operation",
            ("operation",),
            registry=self.registry,
        )
        self.trajectories_closed = Counter(
            "tandem_trajectories_closed",
            "Trajectories closed, by reason and route",
            ("reason", "route"),
            registry=self.registry,
        )
        self.run_steps = Histogram(
            "tandem_trajectory_steps",
            "Steps per closed trajectory",
            ("route",),
            buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
            registry=self.registry,
        )
        self.run_cost = Histogram(
            "tandem_trajectory_cost_usd",
            "Dollars per closed trajectory",
            ("route",),
            buckets=(0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25),
            registry=self.registry,
        )
        self.run_cloud_share = Histogram(
            "tandem_trajectory_cloud_share",
            "Share of steps answered by the cloud, per closed trajectory",
            ("route",),
            buckets=(0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1),
            registry=self.registry,
        )
        self.run_savings = Histogram(
            "tandem_trajectory_savings_usd",
            "Dollars saved against all-cloud, per closed trajectory",
            ("route",),
            buckets=(0, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=self.registry,
        )
        Info("tandem_build", "Build information", registry=self.registry).info({"version": __version__})

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    def trajectory_closed(self, trajectory: Trajectory) -> None:
        """Per-run figures, recorded once, by whoever closed the trajectory."""
        route = trajectory.route
        self.trajectories_closed.labels(trajectory.close_reason or "unknown", route).inc()
        self.run_steps.labels(route).observe(trajectory.steps)
        self.run_cost.labels(route).observe(trajectory.money["cost_usd"])
        self.run_cloud_share.labels(route).observe(trajectory.cloud_share)
        self.run_savings.labels(route).observe(max(trajectory.savings_usd, 0.0))
